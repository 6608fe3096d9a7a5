//! `dups --output`: one row per document (its cluster, the cluster's size and representative,
//! whether it is a duplicate, its best score), written atomically as Parquet or JSON Lines.

use anyhow::Context;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use pocketdex_methods::groups::Cluster;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// The file formats of `--output`, told by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Parquet,
    Jsonl,
}

impl Format {
    /// The format a file's extension names: `.parquet` or `.jsonl`; anything else is an error
    /// that says so.
    pub fn of(path: &Path) -> anyhow::Result<Format> {
        // In any case, and .ndjson too, as inputs are recognised.
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("parquet") => Ok(Format::Parquet),
            Some("jsonl" | "ndjson") => Ok(Format::Jsonl),
            _ => anyhow::bail!(
                "--output {}: name a .parquet or a .jsonl file (or .ndjson; the extension chooses the format)",
                path.display()
            ),
        }
    }
}

/// Rows per Arrow batch handed to the Parquet writer (it gathers them into row groups).
const BATCH_ROWS: usize = 64 * 1024;

/// The columns, as pipelines read them. The counts are Int64, not unsigned: Spark and other
/// JVM readers have no unsigned types (a Parquet UINT64 becomes a decimal there), and pandas
/// turns uint64 mixed with int64 into float64.
fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("cluster_id", DataType::Int64, false),
        Field::new("cluster_size", DataType::Int64, false),
        Field::new("representative_id", DataType::Utf8, false),
        Field::new("is_duplicate", DataType::Boolean, false),
        Field::new("score", DataType::Float64, true),
    ]))
}

/// One row of the JSON Lines output, its fields in the Parquet file's column order.
#[derive(serde::Serialize)]
struct JsonRow<'a> {
    id: &'a str,
    cluster_id: u64,
    cluster_size: u64,
    representative_id: &'a str,
    is_duplicate: bool,
    score: Option<f64>,
}

/// Writes `rows` (documents named by `ids`) to `path` in `format`, atomically.
pub fn write(path: &Path, format: Format, ids: &[String], rows: &[Cluster]) -> anyhow::Result<()> {
    pocketdex::atomic::write_file(path, |out| {
        match format {
            Format::Parquet => parquet(out, ids, rows),
            Format::Jsonl => jsonl(out, ids, rows),
        }
        .map_err(|e| pocketdex::Error::Invalid(format!("{e:#}")))
    })
    .with_context(|| format!("writing {}", path.display()))
}

fn jsonl(out: &mut (dyn Write + Send), ids: &[String], rows: &[Cluster]) -> anyhow::Result<()> {
    for r in rows {
        let row = JsonRow {
            id: &ids[r.doc as usize],
            cluster_id: r.cluster,
            cluster_size: r.size,
            representative_id: &ids[r.representative as usize],
            is_duplicate: r.is_duplicate,
            score: r.score,
        };
        serde_json::to_writer(&mut *out, &row)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn parquet(out: &mut (dyn Write + Send), ids: &[String], rows: &[Cluster]) -> anyhow::Result<()> {
    let schema = schema();
    // Snappy: what pyarrow and Spark write by default, and what every reader decodes.
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer = ArrowWriter::try_new(out, Arc::clone(&schema), Some(props))?;
    for chunk in rows.chunks(BATCH_ROWS) {
        let id = |d: u32| ids[d as usize].as_str();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                chunk.iter().map(|r| id(r.doc)),
            )),
            Arc::new(Int64Array::from_iter_values(
                chunk.iter().map(|r| r.cluster as i64),
            )),
            Arc::new(Int64Array::from_iter_values(
                chunk.iter().map(|r| r.size as i64),
            )),
            Arc::new(StringArray::from_iter_values(
                chunk.iter().map(|r| id(r.representative)),
            )),
            Arc::new(BooleanArray::from_iter(
                chunk.iter().map(|r| Some(r.is_duplicate)),
            )),
            Arc::new(Float64Array::from_iter(chunk.iter().map(|r| r.score))),
        ];
        writer.write(&RecordBatch::try_new(Arc::clone(&schema), columns)?)?;
    }
    writer.close()?;
    Ok(())
}
