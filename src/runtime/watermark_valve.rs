//! `WatermarkValve`: the watermark of a task with several input channels (or of a source
//! with several splits), as Flink's `StatusWatermarkValve` computes it.
//!
//! Each channel has its last watermark and a status. The output watermark is the minimum over
//! the active channels that have caught up with the last output ("aligned"), emitted when it
//! advances. A channel going idle leaves the minimum; when every channel is idle the largest
//! watermark of all is emitted and the output goes idle too. A channel becoming active again
//! rejoins the minimum once its watermark reaches the output. A channel that ends leaves the
//! valve (as a finished split leaves its source in Flink); when every channel has ended the
//! output is the final watermark, `i64::MAX`.

pub use crate::exec::operator::WatermarkStatus;

#[derive(Debug, Clone)]
struct Channel {
    watermark: i64,
    status: WatermarkStatus,
    /// Caught up with the output watermark: only aligned channels make the minimum.
    aligned: bool,
    /// Ended channels are gone: they neither hold event time back nor keep the valve active.
    ended: bool,
}

/// What the valve emits after an input: a new watermark, a new status, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValveOutput {
    pub watermark: Option<i64>,
    pub status: Option<WatermarkStatus>,
}

#[derive(Debug, Clone)]
pub struct WatermarkValve {
    channels: Vec<Channel>,
    last_output: i64,
    status: WatermarkStatus,
}

impl WatermarkValve {
    pub fn new(channels: usize) -> Self {
        WatermarkValve {
            channels: vec![
                Channel {
                    watermark: i64::MIN,
                    status: WatermarkStatus::Active,
                    aligned: true,
                    ended: false,
                };
                channels
            ],
            last_output: i64::MIN,
            status: WatermarkStatus::Active,
        }
    }

    /// A restored valve: its output was `watermark` when the checkpoint was taken. Every
    /// channel starts there (one that was behind was late against that output already), so
    /// the output moves on only once all of them have passed it again.
    pub fn restored(channels: usize, watermark: i64) -> Self {
        let mut valve = WatermarkValve::new(channels);
        valve.last_output = watermark;
        for c in &mut valve.channels {
            c.watermark = watermark;
        }
        valve
    }

    /// The valve's current output watermark (`i64::MIN` before the first).
    pub fn output(&self) -> i64 {
        self.last_output
    }

    /// A watermark arrived on `channel`; a lower one than before, or one on an idle channel,
    /// changes nothing.
    pub fn on_watermark(&mut self, channel: usize, watermark: i64) -> ValveOutput {
        let c = &mut self.channels[channel];
        if c.ended || c.status == WatermarkStatus::Idle || watermark <= c.watermark {
            return ValveOutput::default();
        }
        c.watermark = watermark;
        if watermark >= self.last_output {
            c.aligned = true;
        }
        ValveOutput {
            watermark: self.advance_to_minimum(),
            status: None,
        }
    }

    /// `channel` has ended: it leaves the valve, as a finished split leaves its source in
    /// Flink. Only when every channel has ended does event time reach the end (`i64::MAX`); a
    /// finished channel beside idle ones does not make them late.
    pub fn on_end(&mut self, channel: usize) -> ValveOutput {
        let c = &mut self.channels[channel];
        if c.ended {
            return ValveOutput::default();
        }
        c.ended = true;
        if self.channels.iter().all(|c| c.ended) {
            let status = (self.status == WatermarkStatus::Idle).then(|| {
                self.status = WatermarkStatus::Active;
                WatermarkStatus::Active
            });
            let watermark = (self.last_output < i64::MAX).then(|| {
                self.last_output = i64::MAX;
                i64::MAX
            });
            return ValveOutput { watermark, status };
        }
        if self.live().all(|c| c.status == WatermarkStatus::Idle) {
            return self.all_idle();
        }
        ValveOutput {
            watermark: self.advance_to_minimum(),
            status: None,
        }
    }

    /// The channels that have not ended.
    fn live(&self) -> impl Iterator<Item = &Channel> {
        self.channels.iter().filter(|c| !c.ended)
    }

    /// Every live channel is idle: nothing holds event time back, so it moves to the
    /// furthest any of them got, and the output goes idle.
    fn all_idle(&mut self) -> ValveOutput {
        let max = self.live().map(|c| c.watermark).max();
        let watermark = match max {
            Some(w) if w > self.last_output => {
                self.last_output = w;
                Some(w)
            }
            _ => None,
        };
        let status = (self.status != WatermarkStatus::Idle).then(|| {
            self.status = WatermarkStatus::Idle;
            WatermarkStatus::Idle
        });
        ValveOutput { watermark, status }
    }

    /// `channel` went idle or became active again.
    pub fn on_status(&mut self, channel: usize, status: WatermarkStatus) -> ValveOutput {
        let c = &mut self.channels[channel];
        if c.ended || c.status == status {
            return ValveOutput::default();
        }
        c.status = status;
        match status {
            WatermarkStatus::Idle => {
                c.aligned = false;
                if self.live().all(|c| c.status == WatermarkStatus::Idle) {
                    self.all_idle()
                } else {
                    ValveOutput {
                        watermark: self.advance_to_minimum(),
                        status: None,
                    }
                }
            }
            WatermarkStatus::Active => {
                c.aligned = c.watermark >= self.last_output;
                if self.status == WatermarkStatus::Idle {
                    self.status = WatermarkStatus::Active;
                    ValveOutput {
                        watermark: None,
                        status: Some(WatermarkStatus::Active),
                    }
                } else {
                    ValveOutput::default()
                }
            }
        }
    }

    fn advance_to_minimum(&mut self) -> Option<i64> {
        let min = self
            .channels
            .iter()
            .filter(|c| !c.ended && c.status == WatermarkStatus::Active && c.aligned)
            .map(|c| c.watermark)
            .min()?;
        if min > self.last_output {
            self.last_output = min;
            Some(min)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use WatermarkStatus::{Active, Idle};

    fn wm(w: i64) -> ValveOutput {
        ValveOutput {
            watermark: Some(w),
            status: None,
        }
    }

    const NOTHING: ValveOutput = ValveOutput {
        watermark: None,
        status: None,
    };

    #[test]
    fn the_output_is_the_minimum_over_the_channels() {
        let mut valve = WatermarkValve::new(3);
        assert_eq!(valve.on_watermark(0, 10), NOTHING);
        assert_eq!(valve.on_watermark(1, 5), NOTHING);
        assert_eq!(valve.on_watermark(2, 7), wm(5));
        assert_eq!(valve.on_watermark(1, 20), wm(7));
        // Going back changes nothing.
        assert_eq!(valve.on_watermark(2, 6), NOTHING);
        assert_eq!(valve.on_watermark(2, 30), wm(10));
    }

    #[test]
    fn an_idle_channel_leaves_the_minimum_and_rejoins_once_caught_up() {
        let mut valve = WatermarkValve::new(2);
        valve.on_watermark(0, 100);
        valve.on_watermark(1, 10);
        assert_eq!(valve.output(), 10);
        // Channel 1 falls silent: channel 0 alone makes event time.
        assert_eq!(valve.on_status(1, Idle), wm(100));
        assert_eq!(valve.on_watermark(0, 150), wm(150));
        // Back, but behind: it rejoins only when its watermark reaches the output.
        assert_eq!(valve.on_status(1, Active), NOTHING);
        assert_eq!(valve.on_watermark(1, 120), NOTHING);
        assert_eq!(valve.on_watermark(0, 200), wm(200));
        assert_eq!(valve.on_watermark(1, 180), NOTHING);
        assert_eq!(valve.on_watermark(1, 210), NOTHING);
        assert_eq!(valve.on_watermark(0, 300), wm(210));
    }

    #[test]
    fn when_every_channel_is_idle_the_output_is_idle_at_the_furthest_watermark() {
        let mut valve = WatermarkValve::new(2);
        valve.on_watermark(0, 40);
        valve.on_watermark(1, 60);
        assert_eq!(valve.on_status(0, Idle), wm(60));
        assert_eq!(
            valve.on_status(1, Idle),
            ValveOutput {
                watermark: None,
                status: Some(Idle)
            }
        );
        assert_eq!(
            valve.on_status(0, Active),
            ValveOutput {
                watermark: None,
                status: Some(Active)
            }
        );
    }

    #[test]
    fn an_ended_channel_stops_holding_event_time_back() {
        let mut valve = WatermarkValve::new(2);
        valve.on_watermark(0, 5);
        assert_eq!(valve.on_end(1), wm(5));
        assert_eq!(valve.on_end(0), wm(i64::MAX));
    }

    /// Review: two splits of one source, one finished, the other silent for its idle
    /// timeout. Flink's reader unregisters a finished split's output, so the source is idle
    /// at the last watermark; here the finished split's +inf becomes the output, every window
    /// fires, and every later row of the idle split is late.
    #[test]
    fn a_finished_split_and_an_idle_one_do_not_make_the_final_watermark() {
        let mut valve = WatermarkValve::new(2);
        valve.on_watermark(1, 10);
        assert_eq!(valve.on_end(0), wm(10));
        let out = valve.on_status(1, Idle);
        assert_ne!(out.watermark, Some(i64::MAX), "{out:?}");
    }

    /// A split not yet started holds the minimum at its start, so the order splits are read
    /// in cannot make another split's rows late.
    #[test]
    fn a_channel_that_sent_nothing_holds_the_output_back() {
        let mut valve = WatermarkValve::new(2);
        assert_eq!(valve.on_watermark(0, 1_000), NOTHING);
        assert_eq!(valve.on_end(0), NOTHING);
        assert_eq!(valve.on_watermark(1, 10), wm(10));
        assert_eq!(valve.on_end(1), wm(i64::MAX));
    }
}
