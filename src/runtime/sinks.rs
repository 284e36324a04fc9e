//! A job's sinks: one per INSERT, several for a statement set, each fed by the sink edges
//! marked with its index (`Edge::input`). What the runtime does to "the sink" it does to each:
//! writes go to the sink of the channel they came on; idle wake-ups, ends of input, commits
//! and the final `finish` go to all; a checkpoint's sink state is theirs together.

use crate::connector::sink::Sink;
use crate::exec::error::ExecError;

pub struct JobSinks<'s, 'a> {
    sinks: &'s mut [&'a mut dyn Sink],
}

impl<'s, 'a> JobSinks<'s, 'a> {
    pub fn new(sinks: &'s mut [&'a mut dyn Sink]) -> Self {
        JobSinks { sinks }
    }

    pub fn count(&self) -> usize {
        self.sinks.len()
    }

    /// The sink of index `sink` (an edge's `input`).
    pub fn get(&mut self, sink: usize) -> Result<&mut dyn Sink, ExecError> {
        let count = self.sinks.len();
        match self.sinks.get_mut(sink) {
            Some(s) => Ok(&mut **s),
            None => Err(ExecError::Internal(format!(
                "rows for sink {sink} of a job with {count}"
            ))),
        }
    }

    /// Calls `f` on every sink; the first error is returned after all were called (a
    /// sink's commit must not keep the next one from committing).
    fn each(
        &mut self,
        mut f: impl FnMut(&mut dyn Sink) -> Result<(), ExecError>,
    ) -> Result<(), ExecError> {
        let mut first = Ok(());
        for sink in self.sinks.iter_mut() {
            let result = f(&mut **sink);
            if first.is_ok() {
                first = result;
            }
        }
        first
    }

    pub fn finish(&mut self) -> Result<(), ExecError> {
        self.each(|s| s.finish())
    }

    pub fn on_idle(&mut self) -> Result<(), ExecError> {
        self.each(|s| s.on_idle())
    }

    pub fn end_input(&mut self) -> Result<(), ExecError> {
        self.each(|s| s.end_input())
    }

    pub fn commit(&mut self, checkpoint: u64) -> Result<(), ExecError> {
        self.each(|s| s.commit(checkpoint))
    }

    /// The sinks' states for checkpoint `checkpoint`: a single sink's as it is (so that a job
    /// of one INSERT keeps the layout it always had), several as a count, then each state
    /// after its length (little-endian u32 and u64).
    pub fn pre_commit(&mut self, checkpoint: u64) -> Result<Vec<u8>, ExecError> {
        if let [sink] = self.sinks {
            return sink.pre_commit(checkpoint);
        }
        let mut out = (self.sinks.len() as u32).to_le_bytes().to_vec();
        for sink in self.sinks.iter_mut() {
            let state = sink.pre_commit(checkpoint)?;
            out.extend_from_slice(&(state.len() as u64).to_le_bytes());
            out.extend_from_slice(&state);
        }
        Ok(out)
    }

    /// Hands each sink its part of `pre_commit`'s state. A checkpoint of another number of
    /// sinks is refused: its staged files or rows would go to the wrong table.
    pub fn restore(&mut self, state: &[u8]) -> Result<(), ExecError> {
        if let [sink] = self.sinks {
            return sink.restore(state);
        }
        let states = split_states(state).ok_or_else(|| {
            ExecError::Checkpoint(format!(
                "the checkpoint's sink state is not that of {} sinks (a statement set of {} INSERTs): it was taken by another job",
                self.sinks.len(),
                self.sinks.len()
            ))
        })?;
        if states.len() != self.sinks.len() {
            return Err(ExecError::Checkpoint(format!(
                "the checkpoint holds the state of {} sinks, and this job writes {} tables",
                states.len(),
                self.sinks.len()
            )));
        }
        for (sink, state) in self.sinks.iter_mut().zip(states) {
            sink.restore(state)?;
        }
        Ok(())
    }
}

/// The states `JobSinks::pre_commit` put together for several sinks, or `None` when the
/// bytes are not such a list.
fn split_states(mut bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let count = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    bytes = &bytes[4..];
    let mut out = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
        let len = usize::try_from(len).ok()?;
        bytes = &bytes[8..];
        out.push(bytes.get(..len)?);
        bytes = &bytes[len..];
    }
    bytes.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::chunk::StreamChunk;

    /// A sink whose state is its name and the checkpoint's number, and which records what it
    /// was restored from.
    struct Named(&'static str, Option<Vec<u8>>);

    impl Sink for Named {
        fn write(&mut self, _: StreamChunk) -> Result<(), ExecError> {
            Ok(())
        }
        fn finish(&mut self) -> Result<(), ExecError> {
            Ok(())
        }
        fn pre_commit(&mut self, checkpoint: u64) -> Result<Vec<u8>, ExecError> {
            Ok(format!("{}:{checkpoint}", self.0).into_bytes())
        }
        fn restore(&mut self, state: &[u8]) -> Result<(), ExecError> {
            self.1 = Some(state.to_vec());
            Ok(())
        }
    }

    #[test]
    fn each_sink_restores_its_own_state() {
        let (mut a, mut b, mut c) = (Named("a", None), Named("bb", None), Named("", None));
        let state = {
            let mut sinks: [&mut dyn Sink; 3] = [&mut a, &mut b, &mut c];
            JobSinks::new(&mut sinks).pre_commit(7).unwrap()
        };
        let (mut x, mut y, mut z) = (Named("x", None), Named("y", None), Named("z", None));
        let mut sinks: [&mut dyn Sink; 3] = [&mut x, &mut y, &mut z];
        JobSinks::new(&mut sinks).restore(&state).unwrap();
        assert_eq!(x.1.as_deref(), Some(&b"a:7"[..]));
        assert_eq!(y.1.as_deref(), Some(&b"bb:7"[..]));
        assert_eq!(z.1.as_deref(), Some(&b":7"[..]));
    }

    #[test]
    fn one_sink_keeps_its_state_as_it_is() {
        let mut a = Named("a", None);
        let mut sinks: [&mut dyn Sink; 1] = [&mut a];
        assert_eq!(JobSinks::new(&mut sinks).pre_commit(3).unwrap(), b"a:3");
    }

    #[test]
    fn another_number_of_sinks_or_bad_bytes_are_refused() {
        let (mut a, mut b) = (Named("a", None), Named("b", None));
        let state = {
            let mut sinks: [&mut dyn Sink; 2] = [&mut a, &mut b];
            JobSinks::new(&mut sinks).pre_commit(1).unwrap()
        };
        let (mut x, mut y, mut z) = (Named("x", None), Named("y", None), Named("z", None));
        let mut three: [&mut dyn Sink; 3] = [&mut x, &mut y, &mut z];
        let err = JobSinks::new(&mut three).restore(&state).unwrap_err();
        assert!(err.to_string().contains("2 sinks"), "{err}");
        for cut in 0..state.len() {
            let mut two: [&mut dyn Sink; 2] = [&mut x, &mut y];
            assert!(JobSinks::new(&mut two).restore(&state[..cut]).is_err());
        }
    }
}
