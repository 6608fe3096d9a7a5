//! Parquet files of documents (the `parquet` feature): one document per row, its id, text and
//! title in the columns [`Keys`] names, read a batch of rows at a time and mapped on every core
//! through the same ordered batches as JSON Lines records, with the same skips. String columns
//! are read as bytes and decoded here, so that invalid UTF-8 is replaced and counted as in any
//! other input (the arrow reader would fail the whole file on one invalid byte).

use super::{from_text, from_vec, in_lane, Item, Keys, Overlap, Reader, SkipKind, Skipped};
use crate::error::{Error, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};
use arrow_schema::{DataType, Schema};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::basic::{ConvertedType, LogicalType, Type as Physical};
use parquet::file::metadata::{FileMetaData, ParquetMetaData};
use parquet::schema::types::{SchemaDescriptor, Type};
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
    ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| damaged(path, e))
}

fn damaged(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!(
        "{}: not a Parquet file, or a damaged one ({e})",
        path.display()
    ))
}

/// True when a top-level column is a string in the Parquet schema (bytes annotated UTF-8),
/// which the arrow reader checks value by value.
fn utf8_annotated(t: &Type) -> bool {
    t.is_primitive()
        && t.get_physical_type() == Physical::BYTE_ARRAY
        && (t.get_basic_info().converted_type() == ConvertedType::UTF8
            || matches!(
                t.get_basic_info().logical_type_ref(),
                Some(LogicalType::String)
            ))
}

/// A reader of `file` whose top-level string columns among `roots` are read as bytes: their
/// UTF-8 annotation is dropped from the schema the arrow reader is given (and the file's
/// arrow schema, which would type them as strings again, is not read), so that a value with
/// invalid UTF-8 reaches [`lossy`] instead of failing its whole batch.
fn as_bytes(
    path: &Path,
    meta: &ParquetMetaData,
    roots: &[usize],
) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file_meta = meta.file_metadata();
    let root = file_meta.schema_descr().root_schema();
    let fields = root
        .get_fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if !roots.contains(&i) || !utf8_annotated(f) {
                return Ok(f.clone());
            }
            let info = f.get_basic_info();
            let mut bytes = Type::primitive_type_builder(info.name(), Physical::BYTE_ARRAY)
                .with_id(info.has_id().then(|| info.id()));
            if info.has_repetition() {
                bytes = bytes.with_repetition(info.repetition());
            }
            bytes.build().map(std::sync::Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()
        .map_err(|e| damaged(path, e))?;
    let root = Type::group_type_builder(root.name())
        .with_fields(fields)
        .build()
        .map_err(|e| damaged(path, e))?;
    let file_meta = FileMetaData::new(
        file_meta.version(),
        file_meta.num_rows(),
        file_meta.created_by().map(str::to_owned),
        file_meta.key_value_metadata().cloned(),
        std::sync::Arc::new(SchemaDescriptor::new(std::sync::Arc::new(root))),
        file_meta.column_orders().cloned(),
    );
    let meta = ParquetMetaData::new(file_meta, meta.row_groups().to_vec());
    let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
    let arrow = ArrowReaderMetadata::try_new(std::sync::Arc::new(meta), options)
        .map_err(|e| damaged(path, e))?;
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
        file, arrow,
    ))
}

/// Bytes of a string column as text: invalid UTF-8 replaced by U+FFFD, and how many were.
fn lossy(bytes: &[u8]) -> (String, usize) {
    let d = crate::text::decode_keeping_bom(bytes);
    (d.text, d.invalid_utf8)
}

/// The rows of a Parquet file, from its footer.
pub(super) fn rows(path: &Path) -> Result<u64> {
    Ok(open(path)?.metadata().file_metadata().num_rows().max(0) as u64)
}

/// Which of a document's fields a column holds: each may hold different types.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Text,
    Id,
    Title,
}

impl Role {
    /// What a column of this role may hold, for messages.
    fn types(self) -> &'static str {
        match self {
            Role::Text => {
                "strings (Utf8, LargeUtf8, Utf8View) or bytes (Binary, LargeBinary, BinaryView)"
            }
            Role::Id => "strings, integers or bytes",
            Role::Title => "strings, numbers, booleans or bytes",
        }
    }
}

/// What a column may hold: strings or bytes; for ids integers too (as JSON Lines ids may be
/// numbers), for titles any number or boolean (as a JSON Lines title: its text);
/// dictionary-encoded (pandas' categorical) or not.
fn readable(t: &DataType, role: Role) -> bool {
    use DataType::*;
    match t {
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView => true,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => role != Role::Text,
        Float32 | Float64 | Boolean => role == Role::Title,
        Dictionary(_, values) => readable(values, role),
        _ => false,
    }
}

/// True for the arrow types of text (whose bytes are then text, not a file's).
fn is_string(t: &DataType) -> bool {
    use DataType::*;
    match t {
        Utf8 | LargeUtf8 | Utf8View => true,
        Dictionary(_, values) => is_string(values),
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
    /// The text column holds strings (read as bytes): text, not a file's bytes.
    text_is_string: bool,
}

/// One column's value in one row.
enum Value<'a> {
    Str(&'a str),
    Bytes(&'a [u8]),
    Int(i128),
    /// A number or boolean title's text.
    Owned(String),
}

impl Value<'_> {
    /// Its size in bytes (an integer's does not matter).
    fn len(&self) -> usize {
        match self {
            Value::Str(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::Int(_) => 0,
            Value::Owned(s) => s.len(),
        }
    }

    /// As a string: bytes decoded lossily, integers in decimal; and the invalid UTF-8
    /// sequences replaced.
    fn into_string(self) -> (String, usize) {
        match self {
            Value::Str(s) => (s.to_owned(), 0),
            Value::Bytes(b) => lossy(b),
            Value::Int(n) => (n.to_string(), 0),
            Value::Owned(s) => (s, 0),
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
    /// Numbers and booleans (titles): their text.
    Text(&'a dyn Array, fn(&dyn Array, usize) -> String),
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

/// A floating-point or boolean row's text, as a JSON Lines title's: the shortest decimal
/// that reads back as the value (`3` for 3.0), `true` or `false`.
fn float32(a: &dyn Array, row: usize) -> String {
    a.as_primitive::<arrow_array::types::Float32Type>()
        .value(row)
        .to_string()
}

fn float64(a: &dyn Array, row: usize) -> String {
    a.as_primitive::<arrow_array::types::Float64Type>()
        .value(row)
        .to_string()
}

fn boolean(a: &dyn Array, row: usize) -> String {
    a.as_boolean().value(row).to_string()
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
            Float32 => Column::Text(a, float32),
            Float64 => Column::Text(a, float64),
            Boolean => Column::Text(a, boolean),
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
            Column::Text(a, text) => valid(*a, row).map(|()| Value::Owned(text(*a, row)))?,
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
        let (layout, roots, rows_per_batch) = self.plan(&builder, &name)?;
        on_count(builder.metadata().file_metadata().num_rows().max(0) as u64);
        let builder = as_bytes(path, builder.metadata(), &roots)?;
        // Each column as it is read, without the file's arrow schema: the types `plan`
        // accepted, or bytes for strings; checked again rather than trusted to agree.
        let roles = [
            (Some(layout.text), Role::Text),
            (layout.id, Role::Id),
            (layout.title, Role::Title),
        ];
        for (at, role) in roles {
            if let Some(f) = at.map(|i| builder.schema().field(roots[i])) {
                if !readable(f.data_type(), role) {
                    return Err(Error::Invalid(format!(
                        "{name}: column {:?} is read as {} values; it must hold {}",
                        f.name(),
                        f.data_type(),
                        role.types()
                    )));
                }
            }
        }
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
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
    /// projected batches, the projected columns (in file order), and the rows per batch
    /// (about 4 MiB of text, by the text column's size in the footer).
    fn plan(
        &self,
        builder: &ParquetRecordBatchReaderBuilder<File>,
        name: &str,
    ) -> Result<(Layout, Vec<usize>, usize)> {
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
        let check = |at: Option<usize>, what: &str, role: Role| -> Result<Option<usize>> {
            match at {
                Some(i) if !readable(schema.field(i).data_type(), role) => {
                    Err(Error::Invalid(format!(
                        "{name}: column {:?} holds {} values; {what} column must hold {}",
                        schema.field(i).name(),
                        schema.field(i).data_type(),
                        role.types(),
                    )))
                }
                other => Ok(other),
            }
        };
        let text_at = check(find(text)?, "a text", Role::Text)?.ok_or_else(|| {
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
            check(find(id)?, "an id", Role::Id)?,
            "--id-key",
        )?;
        let title_at = named(
            title,
            &defaults.title,
            // Numbers and booleans, as a JSON Lines title that is one: its text.
            check(find(title)?, "a title", Role::Title)?,
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
            text_is_string: is_string(schema.field(text_at).data_type()),
        };
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
        Ok((layout, roots, rows_per_batch))
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
                // Invalid UTF-8 in the id and title is counted with the text's, as in a JSON
                // Lines record.
                let (id, id_invalid) = id
                    .as_ref()
                    .and_then(|c| c.get(row))
                    .map(Value::into_string)
                    // A blank id names nothing, as in a JSON Lines record.
                    .filter(|(id, _)| !id.trim().is_empty())
                    .unwrap_or_else(|| (format!("{name}:{}", first_row + row as u64), 0));
                let value = text.get(row);
                let size = value.as_ref().map_or(0, Value::len) as u64;
                if size > self.max_doc_bytes {
                    return map(self.too_large(id, size));
                }
                in_lane(size, || {
                    let (title, title_invalid) = match title.as_ref().and_then(|c| c.get(row)) {
                        Some(v) => {
                            let (t, n) = v.into_string();
                            (Some(t), n)
                        }
                        None => (None, 0),
                    };
                    // A string is a text, as a JSON Lines record's (`Ok`); bytes are a file's.
                    let text = match value {
                        None => None,
                        Some(Value::Str(s)) => Some(Ok((s.to_owned(), 0))),
                        Some(Value::Bytes(b)) if layout.text_is_string => Some(Ok(lossy(b))),
                        Some(Value::Bytes(b)) => Some(Err(b)),
                        Some(Value::Int(_) | Value::Owned(_)) => {
                            unreachable!("a text column holds no numbers")
                        }
                    };
                    let skipped = |id, kind, reason| Item::Skipped(Skipped { id, kind, reason });
                    let item = match text {
                        None => skipped(
                            id,
                            SkipKind::NoTextField,
                            format!("no text ({key:?} is null)"),
                        ),
                        Some(Ok((s, _))) if s.trim().is_empty() => {
                            skipped(id, SkipKind::Empty, "empty".into())
                        }
                        Some(Ok((s, invalid))) => from_text(id, title, s, None, invalid),
                        Some(Err(b)) => from_vec(id, title, b.to_vec(), None),
                    };
                    let item = match item {
                        Item::Doc(mut d) => {
                            d.invalid_utf8 += id_invalid + title_invalid;
                            Item::Doc(d)
                        }
                        skipped => skipped,
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
        // A blank id is no name: the row's place is, as for a null one.
        let ids: ArrayRef = Arc::new(StringArray::from(vec!["", " \t"]));
        let text: ArrayRef = Arc::new(StringArray::from(vec!["one", "two"]));
        let (rows, _) = read_back(vec![("id", ids), ("text", text)], &Reader::default());
        assert_eq!(
            rows,
            pairs(&[("t.parquet:1", "one"), ("t.parquet:2", "two")])
        );
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

    /// A string column with invalid UTF-8 (Spark writes such bytes as strings unchecked) is
    /// read, its invalid bytes replaced and counted with those of a bytes id; number and
    /// boolean titles are their text, as in JSON Lines.
    #[test]
    fn invalid_utf8_in_strings_is_counted_and_titles_may_be_numbers() {
        use arrow_array::BooleanArray;
        use parquet::data_type::{ByteArray, ByteArrayType, DoubleType};
        use parquet::file::writer::SerializedFileWriter;
        // Written by the low-level writer: arrow's own arrays cannot hold invalid UTF-8.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let schema = parquet::schema::parser::parse_message_type(
            "message m { required binary id; required binary text (UTF8); required double title; }",
        )
        .unwrap();
        let mut w = SerializedFileWriter::new(
            File::create(&path).unwrap(),
            schema.into(),
            Default::default(),
        )
        .unwrap();
        let mut group = w.next_row_group().unwrap();
        let bytes = |v: [&[u8]; 2]| v.map(|b| ByteArray::from(b.to_vec()));
        for values in [
            bytes([b"id\xfe", b"two"]),
            bytes([b"caf\xe9 au \xff lait", b"plain"]),
        ] {
            let mut col = group.next_column().unwrap().unwrap();
            col.typed::<ByteArrayType>()
                .write_batch(&values, None, None)
                .unwrap();
            col.close().unwrap();
        }
        let mut col = group.next_column().unwrap().unwrap();
        col.typed::<DoubleType>()
            .write_batch(&[3.0, 2.5], None, None)
            .unwrap();
        col.close().unwrap();
        group.close().unwrap();
        w.close().unwrap();
        let read = |path: &Path| {
            let mut docs = Vec::new();
            Reader::default()
                .for_each_batch(
                    &[Source::Parquet(path.to_path_buf())],
                    1,
                    |item| match item {
                        Item::Doc(d) => (d.id, d.title, d.text, d.invalid_utf8),
                        Item::Skipped(s) => panic!("{s:?}"),
                    },
                    |_| {},
                    |batch| {
                        docs.extend(batch);
                        Ok(())
                    },
                )
                .unwrap();
            docs
        };
        let s = |v: &str| v.to_string();
        assert_eq!(
            read(&path),
            vec![
                (
                    s("id\u{fffd}"),
                    Some(s("3")),
                    s("caf\u{fffd} au \u{fffd} lait"),
                    3
                ),
                (s("two"), Some(s("2.5")), s("plain"), 0),
            ]
        );
        let text: ArrayRef = Arc::new(StringArray::from(vec!["one", "two"]));
        let bools: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), None]));
        let batch = RecordBatch::try_from_iter(vec![("text", text), ("title", bools)]).unwrap();
        let mut w =
            ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let docs = read(&path);
        assert_eq!(
            docs.iter().map(|d| d.1.clone()).collect::<Vec<_>>(),
            vec![Some(s("true")), None]
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
