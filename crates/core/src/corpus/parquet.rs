//! Parquet files of documents (the `parquet` feature): one document per row, its id, text and
//! title in the columns [`Keys`] names, read a batch of rows at a time and mapped on every core
//! through the same ordered batches as JSON Lines records, with the same skips.

use super::{from_text, from_vec, in_lane, Item, Keys, Overlap, Reader, SkipKind, Skipped};
use crate::error::{Error, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};
use arrow_schema::{DataType, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use rayon::prelude::*;
use std::fs::File;
use std::path::Path;

/// Bytes of text per batch of rows, as for a batch of JSON Lines.
const BATCH_TEXT_BYTES: u64 = super::JSONL_CHUNK as u64;
/// At most this many rows per batch, however short the texts.
const MAX_BATCH_ROWS: u64 = 8192;

/// Opens a Parquet file: its footer is read, nothing else.
fn open(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| {
        Error::Invalid(format!(
            "{}: not a Parquet file, or a damaged one ({e})",
            path.display()
        ))
    })
}

/// The rows of a Parquet file, from its footer.
pub(super) fn rows(path: &Path) -> Result<u64> {
    Ok(open(path)?.metadata().file_metadata().num_rows().max(0) as u64)
}

/// What a column may hold: strings or bytes, and for ids integers too (as JSON Lines ids may
/// be numbers); dictionary-encoded (pandas' categorical) or not.
fn readable(t: &DataType, integers: bool) -> bool {
    use DataType::*;
    match t {
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView => true,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => integers,
        Dictionary(_, values) => readable(values, integers),
        _ => false,
    }
}

/// The top-level columns of a file, for messages: `id (Int64), body (Utf8)`.
fn columns(schema: &Schema) -> String {
    let all: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{} ({})", f.name(), f.data_type()))
        .collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join(", ")
    }
}

/// Where the id, text and title are among the projected columns.
struct Layout {
    id: Option<usize>,
    text: usize,
    title: Option<usize>,
}

/// One column's value in one row.
enum Value<'a> {
    Str(&'a str),
    Bytes(&'a [u8]),
    Int(i128),
}

impl Value<'_> {
    /// Its size in bytes (an integer's does not matter).
    fn len(&self) -> usize {
        match self {
            Value::Str(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::Int(_) => 0,
        }
    }

    /// As a string: bytes decoded lossily, integers in decimal.
    fn into_string(self) -> String {
        match self {
            Value::Str(s) => s.to_owned(),
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Value::Int(n) => n.to_string(),
        }
    }
}

/// A column of one batch, read row by row from any thread.
enum Column<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    BinaryView(&'a arrow_array::BinaryViewArray),
    Int(&'a dyn Array, fn(&dyn Array, usize) -> i128),
    Dict {
        keys: &'a dyn Array,
        index: Vec<usize>,
        values: Box<Column<'a>>,
    },
}

/// The value of an integer column's row.
fn int<T: ArrowPrimitiveType>(a: &dyn Array, row: usize) -> i128
where
    T::Native: Into<i128>,
{
    a.as_primitive::<T>().value(row).into()
}

impl<'a> Column<'a> {
    /// The column over `a`, of a type [`readable`] accepts.
    fn new(a: &'a dyn Array) -> Column<'a> {
        use DataType::*;
        match a.data_type() {
            Utf8 => Column::Utf8(a.as_string()),
            LargeUtf8 => Column::LargeUtf8(a.as_string()),
            Utf8View => Column::Utf8View(a.as_string_view()),
            Binary => Column::Binary(a.as_binary()),
            LargeBinary => Column::LargeBinary(a.as_binary()),
            BinaryView => Column::BinaryView(a.as_binary_view()),
            Int8 => Column::Int(a, int::<Int8Type>),
            Int16 => Column::Int(a, int::<Int16Type>),
            Int32 => Column::Int(a, int::<Int32Type>),
            Int64 => Column::Int(a, int::<Int64Type>),
            UInt8 => Column::Int(a, int::<UInt8Type>),
            UInt16 => Column::Int(a, int::<UInt16Type>),
            UInt32 => Column::Int(a, int::<UInt32Type>),
            UInt64 => Column::Int(a, int::<UInt64Type>),
            Dictionary(..) => {
                let d = a.as_any_dictionary();
                Column::Dict {
                    keys: d.keys(),
                    index: d.normalized_keys(),
                    values: Box::new(Column::new(d.values().as_ref())),
                }
            }
            other => unreachable!("column type {other} was checked before reading"),
        }
    }

    /// The value in `row`; `None` when it is null.
    fn get(&self, row: usize) -> Option<Value<'a>> {
        fn valid(a: &dyn Array, row: usize) -> Option<()> {
            a.is_valid(row).then_some(())
        }
        Some(match self {
            Column::Utf8(a) => valid(*a, row).map(|()| Value::Str(a.value(row)))?,
            Column::LargeUtf8(a) => valid(*a, row).map(|()| Value::Str(a.value(row)))?,
            Column::Utf8View(a) => valid(*a, row).map(|()| Value::Str(a.value(row)))?,
            Column::Binary(a) => valid(*a, row).map(|()| Value::Bytes(a.value(row)))?,
            Column::LargeBinary(a) => valid(*a, row).map(|()| Value::Bytes(a.value(row)))?,
            Column::BinaryView(a) => valid(*a, row).map(|()| Value::Bytes(a.value(row)))?,
            Column::Int(a, value) => valid(*a, row).map(|()| Value::Int(value(*a, row)))?,
            Column::Dict {
                keys,
                index,
                values,
            } => {
                valid(*keys, row)?;
                values.get(index[row])?
            }
        })
    }
}

impl Reader {
    /// Reads a Parquet file: its columns checked, then batches of rows decoded on a reader
    /// thread (one batch ahead) while the rayon pool maps the previous one.
    pub(super) fn parquet<T: Send>(
        &self,
        path: &Path,
        map: &(impl Fn(Item) -> T + Sync),
        on_count: &mut impl FnMut(u64),
        overlap: &mut Overlap<T>,
        sink: &mut impl FnMut(Vec<T>) -> Result<()>,
    ) -> Result<()> {
        let name = path.display().to_string();
        let builder = open(path)?;
        let (layout, mask, rows_per_batch) = self.plan(&builder, &name)?;
        on_count(builder.metadata().file_metadata().num_rows().max(0) as u64);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(rows_per_batch)
            .build()
            .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            s.spawn(move || {
                for batch in reader {
                    if tx.send(batch).is_err() {
                        return;
                    }
                }
            });
            let mut first_row = 1u64;
            for batch in rx {
                let batch = batch.map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
                let n = batch.num_rows() as u64;
                overlap.step(
                    || self.parquet_batch(&batch, &layout, first_row, &name, map),
                    sink,
                )?;
                first_row += n;
            }
            Ok(())
        })
    }

    /// Finds the columns [`Reader::keys`] names and checks their types: the layout of the
    /// projected batches, the projection, and the rows per batch (about 4 MiB of text, by the
    /// text column's size in the footer).
    fn plan(
        &self,
        builder: &ParquetRecordBatchReaderBuilder<File>,
        name: &str,
    ) -> Result<(Layout, ProjectionMask, usize)> {
        let schema = builder.schema();
        let Keys { id, text, title } = &self.keys;
        // Two columns of one name: which one holds the text is not for us to guess.
        let find = |key: &str| -> Result<Option<usize>> {
            let mut at = schema
                .fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| f.name() == key);
            match (at.next(), at.next()) {
                (Some(_), Some(_)) => Err(Error::Invalid(format!(
                    "{name}: more than one column is named {key:?}; rename all but one"
                ))),
                (first, _) => Ok(first.map(|(i, _)| i)),
            }
        };
        let check = |at: Option<usize>, what: &str, integers: bool| -> Result<Option<usize>> {
            match at {
                Some(i) if !readable(schema.field(i).data_type(), integers) => {
                    Err(Error::Invalid(format!(
                        "{name}: column {:?} holds {} values; {what} column must hold strings \
                         (Utf8, LargeUtf8, Utf8View){} or bytes (Binary, LargeBinary, BinaryView)",
                        schema.field(i).name(),
                        schema.field(i).data_type(),
                        if integers { ", integers" } else { "" },
                    )))
                }
                other => Ok(other),
            }
        };
        let text_at = check(find(text)?, "a text", false)?.ok_or_else(|| {
            Error::Invalid(format!(
                "{name}: no column {text:?} holds the documents' text; the file's columns: {}",
                columns(schema)
            ))
        })?;
        // A key the user named (not the default) that the file lacks is a mistake, most likely
        // a misspelling: every row would lose its id or title without a word.
        let defaults = Keys::default();
        let named = |key: &str, default: &str, at: Option<usize>, option: &str| {
            if at.is_none() && key != default {
                return Err(Error::Invalid(format!(
                    "{name}: no column {key:?} ({option}); the file's columns: {}",
                    columns(schema)
                )));
            }
            Ok(at)
        };
        let id_at = named(
            id,
            &defaults.id,
            check(find(id)?, "an id", true)?,
            "--id-key",
        )?;
        let title_at = named(
            title,
            &defaults.title,
            // Integers, as a JSON Lines title that is a number: its decimal text.
            check(find(title)?, "a title", true)?,
            "--title-key",
        )?;
        let mut roots: Vec<usize> = [Some(text_at), id_at, title_at]
            .into_iter()
            .flatten()
            .collect();
        roots.sort_unstable();
        roots.dedup();
        // Projected batches hold the chosen columns in file order.
        let pos = |i: usize| roots.binary_search(&i).expect("projected");
        let layout = Layout {
            id: id_at.map(pos),
            text: pos(text_at),
            title: title_at.map(pos),
        };
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
        // The text column's bytes per row, from the footer's column chunk sizes.
        let meta = builder.metadata();
        let rows = meta.file_metadata().num_rows().max(1) as u64;
        let text_root = schema.field(text_at).name();
        let text_bytes: u64 = meta
            .row_groups()
            .iter()
            .flat_map(|g| g.columns())
            .filter(|c| c.column_path().parts().first() == Some(text_root))
            .map(|c| c.uncompressed_size().max(0) as u64)
            .sum();
        let per_row = (text_bytes / rows).max(1);
        let rows_per_batch = (BATCH_TEXT_BYTES / per_row).clamp(1, MAX_BATCH_ROWS) as usize;
        Ok((layout, mask, rows_per_batch))
    }

    /// The items of one batch of rows, each made and mapped on the rayon pool (a large one in
    /// the lane), in row order. Rows are numbered from `first_row` for ids of rows without one.
    fn parquet_batch<T: Send>(
        &self,
        batch: &RecordBatch,
        layout: &Layout,
        first_row: u64,
        name: &str,
        map: &(impl Fn(Item) -> T + Sync),
    ) -> Vec<T> {
        let column = |i: usize| Column::new(batch.column(i).as_ref());
        let text = column(layout.text);
        let id = layout.id.map(column);
        let title = layout.title.map(column);
        let key = &self.keys.text;
        (0..batch.num_rows())
            .into_par_iter()
            .map(|row| {
                let id = id
                    .as_ref()
                    .and_then(|c| c.get(row))
                    .map(Value::into_string)
                    .unwrap_or_else(|| format!("{name}:{}", first_row + row as u64));
                let value = text.get(row);
                let size = value.as_ref().map_or(0, Value::len) as u64;
                if size > self.max_doc_bytes {
                    return map(self.too_large(id, size));
                }
                in_lane(size, || {
                    let title = title
                        .as_ref()
                        .and_then(|c| c.get(row))
                        .map(Value::into_string);
                    let skipped = |kind, reason: String| {
                        Item::Skipped(Skipped {
                            id: id.clone(),
                            kind,
                            reason,
                        })
                    };
                    let item = match value {
                        None => {
                            skipped(SkipKind::NoTextField, format!("no text ({key:?} is null)"))
                        }
                        // A string is a text, as a JSON Lines record's; bytes are a file's.
                        Some(Value::Str(s)) if s.trim().is_empty() => {
                            skipped(SkipKind::Empty, "empty".into())
                        }
                        Some(Value::Str(s)) => from_text(id, title, s.to_owned(), None, 0),
                        Some(Value::Bytes(b)) => from_vec(id, title, b.to_vec(), None),
                        Some(Value::Int(_)) => unreachable!("a text column holds no integers"),
                    };
                    map(item)
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Source;
    use super::*;
    use arrow_array::builder::StringDictionaryBuilder;
    use arrow_array::types::Int32Type;
    use arrow_array::{
        ArrayRef, BinaryArray, Int64Array, LargeStringArray, StringArray, StringViewArray,
    };
    use parquet::arrow::ArrowWriter;
    use std::sync::Arc;

    /// Writes the columns as a Parquet file and reads it back with `reader`: (id, text or
    /// skip reason) per row, and the count `on_count` was told.
    fn read_back(columns: Vec<(&str, ArrayRef)>, reader: &Reader) -> (Vec<(String, String)>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut w =
            ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let (mut out, mut count) = (Vec::new(), 0);
        reader
            .for_each_batch(
                &[Source::Parquet(path)],
                1,
                |item| match item {
                    Item::Doc(d) => (d.id, d.text),
                    Item::Skipped(s) => (s.id, format!("skipped: {}", s.reason)),
                },
                |n| count += n,
                |batch| {
                    out.extend(batch);
                    Ok(())
                },
            )
            .unwrap();
        let out = out
            .into_iter()
            .map(|(id, text)| (id.rsplit('/').next().unwrap().to_string(), text))
            .collect();
        (out, count)
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn every_string_type_and_integer_ids() {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![Some(7), None, Some(-3)]));
        let text: ArrayRef = Arc::new(LargeStringArray::from(vec![
            Some("<p>large <b>string</b></p>"),
            Some("second"),
            None,
        ]));
        let (rows, count) = read_back(vec![("id", ids), ("text", text)], &Reader::default());
        assert_eq!(count, 3);
        assert_eq!(
            rows,
            pairs(&[
                ("7", "\nlarge string\n"),
                ("t.parquet:2", "second"),
                ("-3", "skipped: no text (\"text\" is null)")
            ])
        );
        let ids: ArrayRef = Arc::new(StringViewArray::from(vec!["a", "b"]));
        let text: ArrayRef = Arc::new(StringViewArray::from(vec!["view text", " \n"]));
        let (rows, _) = read_back(vec![("id", ids), ("text", text)], &Reader::default());
        assert_eq!(rows, pairs(&[("a", "view text"), ("b", "skipped: empty")]));
    }

    #[test]
    fn a_named_key_the_file_lacks_and_two_columns_of_a_name_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let write = |names: [&str; 3]| {
            let col = |v: &str| -> ArrayRef { Arc::new(StringArray::from(vec![v])) };
            let schema = Arc::new(arrow_schema::Schema::new(
                names
                    .iter()
                    .map(|n| arrow_schema::Field::new(*n, DataType::Utf8, true))
                    .collect::<Vec<_>>(),
            ));
            let batch =
                RecordBatch::try_new(schema.clone(), vec![col("a"), col(""), col("the text")])
                    .unwrap();
            let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema, None).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
        };
        let read = |keys: Keys| {
            let reader = Reader {
                keys,
                ..Reader::default()
            };
            reader
                .for_each_batch(
                    &[Source::Parquet(path.clone())],
                    1,
                    |i| i,
                    |_| {},
                    |_| Ok(()),
                )
                .err()
                .map(|e| e.to_string())
        };
        write(["id", "text", "text"]);
        let e = read(Keys::default()).unwrap();
        assert!(e.contains("more than one column is named \"text\""), "{e}");
        write(["id", "body", "text"]);
        // The default keys may be absent (no title column); a key the user named may not.
        assert_eq!(read(Keys::default()), None);
        let misspelt = Keys {
            id: "url".into(),
            ..Keys::default()
        };
        let e = read(misspelt).unwrap();
        assert!(
            e.contains("no column \"url\" (--id-key)") && e.contains("body (Utf8)"),
            "{e}"
        );
    }

    #[test]
    fn binary_text_is_read_as_a_file_and_dictionaries_as_their_values() {
        let mut dict = StringDictionaryBuilder::<Int32Type>::new();
        dict.append_value("same id");
        dict.append_null();
        dict.append_value("same id");
        let ids: ArrayRef = Arc::new(dict.finish());
        let text: ArrayRef = Arc::new(BinaryArray::from(vec![
            &b"caf\xe9 au lait"[..],
            &b"\x00\x01\x02PNG"[..],
            &b"\xef\xbb\xbfplain words"[..],
        ]));
        let keys = Keys {
            id: "name".into(),
            text: "body".into(),
            title: "title".into(),
        };
        let reader = Reader {
            keys,
            ..Reader::default()
        };
        let (rows, _) = read_back(vec![("name", ids), ("body", text)], &reader);
        assert_eq!(
            rows,
            pairs(&[
                ("same id", "caf\u{fffd} au lait"),
                ("t.parquet:2", "skipped: binary (NUL or control bytes)"),
                ("same id", "plain words"),
            ])
        );
    }

    #[test]
    fn rows_over_the_limit_are_skipped() {
        let text: ArrayRef = Arc::new(arrow_array::StringArray::from(vec![
            "short one",
            "a longer text than that",
        ]));
        let reader = Reader {
            max_doc_bytes: 10,
            ..Reader::default()
        };
        let (rows, _) = read_back(vec![("text", text)], &reader);
        assert_eq!(
            rows[0],
            ("t.parquet:1".to_string(), "short one".to_string())
        );
        assert_eq!(
            rows[1],
            (
                "t.parquet:2".to_string(),
                "skipped: 23 B, over the limit of 10 B per document".to_string()
            )
        );
    }
}
