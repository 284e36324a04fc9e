//! Flink's `filesystem` connector as an append-only sink: rows are encoded by the table's
//! format into part files inside the directory `path`. A part file is written under a hidden
//! in-progress name and renamed when it is complete, so a reader of the directory never sees
//! half a file; a new part starts when the current one reaches
//! `sink.rolling-policy.file-size`. Names follow Flink's: `part-<uuid>-<subtask>-<n>` in
//! streaming mode, `part-<uuid>-task-<subtask>-file-<n>` in batch mode.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::connector::ConnectorError;
use crate::connector::format::{LineEncoder, new_encoder};
use crate::exec::chunk::{RowKind, StreamChunk};
use crate::exec::operator::ExecError;
use crate::exec::runtime::Sink;
use crate::function::math::random_uuid;
use crate::types::Schema;

/// Flink's default `sink.rolling-policy.file-size`.
const DEFAULT_ROLL_SIZE: u64 = 128 * 1024 * 1024;

pub struct FileSink {
    dir: PathBuf,
    table: String,
    schema: Schema,
    encoder: LineEncoder,
    prefix: String,
    batch: bool,
    /// INSERT OVERWRITE: the files already in the directory go once the job has written.
    overwrite: bool,
    roll_size: u64,
    next_part: u64,
    buffer: String,
    current: Option<PartFile>,
}

struct PartFile {
    in_progress: PathBuf,
    finished: PathBuf,
    out: BufWriter<File>,
    bytes: u64,
}

impl FileSink {
    pub fn new(
        table: &str,
        options: &[(String, String)],
        schema: Schema,
        batch: bool,
        overwrite: bool,
    ) -> Result<Self, ConnectorError> {
        let option = |key: &str| {
            options
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        crate::connector::source::filesystem::check_options(options)?;
        let path = option("path").ok_or_else(|| {
            ConnectorError(format!(
                "table '{table}': option 'path' is required for connector 'filesystem'"
            ))
        })?;
        let dir = PathBuf::from(path.strip_prefix("file://").unwrap_or(path));
        if dir.is_file() {
            return Err(ConnectorError(format!(
                "table '{table}': path '{}' is a file; the filesystem sink writes part files into a directory",
                dir.display()
            )));
        }
        let roll_size = match option("sink.rolling-policy.file-size") {
            Some(text) => parse_memory_size(text).ok_or_else(|| {
                ConnectorError(format!(
                    "table '{table}': invalid value '{text}' for option 'sink.rolling-policy.file-size'"
                ))
            })?,
            None => DEFAULT_ROLL_SIZE,
        };
        let encoder = new_encoder(options, &schema)?;
        Ok(FileSink {
            dir,
            table: table.to_string(),
            schema,
            encoder,
            prefix: format!("part-{}", random_uuid()),
            batch,
            overwrite,
            roll_size,
            next_part: 0,
            buffer: String::new(),
            current: None,
        })
    }

    fn io_error(&self, path: &Path, e: std::io::Error) -> ExecError {
        ExecError::Sink(format!(
            "filesystem sink of table '{}': {}: {e}",
            self.table,
            path.display()
        ))
    }

    fn open_part(&mut self) -> Result<(), ExecError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.io_error(&self.dir, e))?;
        let name = if self.batch {
            format!("{}-task-0-file-{}", self.prefix, self.next_part)
        } else {
            format!("{}-0-{}", self.prefix, self.next_part)
        };
        self.next_part += 1;
        let in_progress = self.dir.join(format!(".{name}.inprogress"));
        let file = File::create(&in_progress).map_err(|e| self.io_error(&in_progress, e))?;
        self.current = Some(PartFile {
            in_progress,
            finished: self.dir.join(name),
            out: BufWriter::new(file),
            bytes: 0,
        });
        Ok(())
    }

    /// The visible files of the directory this job did not write (INSERT OVERWRITE).
    fn remove_older_files(&self) -> Result<(), ExecError> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let hidden = name.starts_with('.') || name.starts_with('_');
            if hidden || name.starts_with(&self.prefix) || !entry.path().is_file() {
                continue;
            }
            std::fs::remove_file(entry.path()).map_err(|e| self.io_error(&entry.path(), e))?;
        }
        Ok(())
    }

    fn close_part(&mut self) -> Result<(), ExecError> {
        let Some(mut part) = self.current.take() else {
            return Ok(());
        };
        part.out
            .flush()
            .map_err(|e| self.io_error(&part.in_progress, e))?;
        drop(part.out);
        std::fs::rename(&part.in_progress, &part.finished)
            .map_err(|e| self.io_error(&part.finished, e))
    }
}

impl Sink for FileSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        if let Some(kinds) = &chunk.kinds
            && kinds.iter().any(|k| *k != RowKind::Insert)
        {
            return Err(ExecError::Sink(format!(
                "table '{}' (connector 'filesystem') is append-only and cannot consume update or delete changes",
                self.table
            )));
        }
        if chunk.num_rows() == 0 {
            return Ok(());
        }
        self.buffer.clear();
        self.encoder
            .encode_batch(&chunk.batch, &self.schema, &mut self.buffer);
        if self.current.is_none() {
            self.open_part()?;
        }
        let part = self.current.as_mut().expect("opened above");
        if let Err(e) = part.out.write_all(self.buffer.as_bytes()) {
            let path = part.in_progress.clone();
            return Err(self.io_error(&path, e));
        }
        part.bytes += self.buffer.len() as u64;
        if part.bytes >= self.roll_size {
            self.close_part()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        self.close_part()?;
        if self.overwrite {
            self.remove_older_files()?;
        }
        Ok(())
    }
}

/// Flink's memory sizes: a number with an optional unit (`b`, `kb`/`k`, `mb`/`m`, `gb`/`g`,
/// `tb`/`t`, also spelled `bytes`, `kibibytes`, …), case-insensitive.
fn parse_memory_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let number: u64 = text[..digits].parse().ok()?;
    let unit = text[digits..].trim().to_ascii_lowercase();
    let shift = match unit.as_str() {
        "" | "b" | "bytes" => 0,
        "k" | "kb" | "kibibytes" => 10,
        "m" | "mb" | "mebibytes" => 20,
        "g" | "gb" | "gibibytes" => 30,
        "t" | "tb" | "tebibytes" => 40,
        _ => return None,
    };
    number.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_memory_size("128MB"), Some(128 << 20));
        assert_eq!(parse_memory_size("1 kb"), Some(1024));
        assert_eq!(parse_memory_size("10"), Some(10));
        assert_eq!(parse_memory_size("ten"), None);
        assert_eq!(parse_memory_size("1 parsec"), None);
    }
}
