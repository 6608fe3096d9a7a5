//! Parquet in and out through the command line: Parquet files written here with the `parquet`
//! crate (Snappy and Zstd, several row groups) from the sample articles build the index their
//! JSON Lines twin builds and answer queries alike; --id-key, --text-key and --title-key in
//! both formats; integer and null ids, null and empty texts, a missing text column and a file
//! that is not Parquet; and `dups --output` as Parquet and JSON Lines, read back and checked
//! row by row against the groups of `dups --json`.

use crate::common;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use common::{failed_with, pocketdex, root, samples, stderr, stdout};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes `columns` as a Parquet file with `compression`, in row groups of at most
/// `group_rows` rows.
fn write_parquet(
    path: &Path,
    columns: Vec<(&str, ArrayRef)>,
    compression: Compression,
    group_rows: usize,
) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// The codec of the file's first column chunk (without its level, which files do not keep),
/// and the number of row groups.
fn layout(path: &Path) -> (String, usize) {
    let file = std::fs::File::open(path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let meta = builder.metadata();
    let codec = format!("{:?}", meta.row_group(0).column(0).compression());
    let name = codec.split('(').next().unwrap().to_string();
    (name, meta.num_row_groups())
}

/// The batches of a Parquet file.
fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    builder.build().unwrap().map(Result::unwrap).collect()
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn run(args: &[&str]) -> std::process::Output {
    let o = pocketdex(args);
    assert!(
        o.status.success(),
        "pocketdex {args:?}: {}\n{}",
        o.status,
        stderr(&o)
    );
    o
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The sample articles as JSON Lines and as Parquet files (Snappy and Zstd, row groups of 64
/// rows: the reader crosses row groups and batches).
fn sample_files(dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    let docs = samples();
    let jsonl = dir.join("wiki.jsonl");
    let mut lines = String::new();
    for (name, text) in &docs {
        lines.push_str(&json!({"id": name, "text": text}).to_string());
        lines.push('\n');
    }
    std::fs::write(&jsonl, lines).unwrap();
    let mut parquets = Vec::new();
    for (name, codec) in [
        ("SNAPPY", Compression::SNAPPY),
        ("ZSTD", Compression::ZSTD(ZstdLevel::try_new(3).unwrap())),
    ] {
        let path = dir.join(format!("wiki-{name}.parquet"));
        let ids: ArrayRef = Arc::new(StringArray::from_iter_values(docs.iter().map(|d| &d.0)));
        let texts: ArrayRef = Arc::new(StringArray::from_iter_values(docs.iter().map(|d| &d.1)));
        write_parquet(&path, vec![("id", ids), ("text", texts)], codec, 64);
        assert_eq!(layout(&path), (name.to_string(), docs.len().div_ceil(64)));
        parquets.push(path);
    }
    (jsonl, parquets)
}

#[test]
fn a_parquet_file_builds_the_index_its_json_lines_twin_builds() {
    let dir = tempfile::tempdir().unwrap();
    let (jsonl, parquets) = sample_files(dir.path());
    let from_jsonl = dir.path().join("jsonl.pdx");
    run(&["build", arg(&jsonl), "-o", arg(&from_jsonl)]);
    let edited = root().join("samples/query/edited.txt");
    let answers = |index: &Path| {
        let hits = run(&["query", arg(index), arg(&edited), "--json"]);
        let info = run(&["info", arg(index), "--json"]);
        let info: Value = serde_json::from_str(&stdout(&info)).unwrap();
        (stdout(&hits), info["documents"].clone())
    };
    let expected = answers(&from_jsonl);
    assert!(
        expected.0.contains(r#""id":"Jupiter.txt""#),
        "{}",
        expected.0
    );
    assert_eq!(expected.1, json!(samples().len()));
    for parquet in &parquets {
        let index = dir.path().join("parquet.pdx");
        let built = run(&["build", arg(parquet), "-o", arg(&index)]);
        assert!(
            stderr(&built).contains("indexed 300 documents"),
            "{}",
            stderr(&built)
        );
        assert_eq!(answers(&index), expected, "{}", parquet.display());
        // Not only the same answers: the same file, byte for byte.
        assert_eq!(
            std::fs::read(&index).unwrap(),
            std::fs::read(&from_jsonl).unwrap()
        );
        // Every row as a query, labelled by its id, answers as the JSON Lines record does.
        let by_rows = run(&[
            "query",
            arg(&from_jsonl),
            arg(parquet),
            "--json",
            "--top",
            "3",
        ]);
        let by_lines = run(&[
            "query",
            arg(&from_jsonl),
            arg(&jsonl),
            "--json",
            "--top",
            "3",
        ]);
        assert_eq!(stdout(&by_rows), stdout(&by_lines));
    }
}

#[test]
fn keys_name_other_fields_and_columns() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<(String, String)> = samples().into_iter().take(40).collect();
    let jsonl = dir.path().join("renamed.jsonl");
    let mut lines = String::new();
    for (i, (name, text)) in docs.iter().enumerate() {
        // A field called "text" that is not the text, to be sure the keys decide.
        let record = json!({"doc_id": name, "body": text, "headline": format!("Title {i}"), "text": "decoy"});
        lines.push_str(&format!("{record}\n"));
    }
    std::fs::write(&jsonl, lines).unwrap();
    let parquet = dir.path().join("renamed.parquet");
    let column = |f: &dyn Fn(usize) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values((0..docs.len()).map(f)))
    };
    write_parquet(
        &parquet,
        vec![
            ("doc_id", column(&|i| docs[i].0.clone())),
            ("body", column(&|i| docs[i].1.clone())),
            ("headline", column(&|i| format!("Title {i}"))),
        ],
        Compression::SNAPPY,
        1024,
    );
    let keys = [
        "--id-key",
        "doc_id",
        "--text-key",
        "body",
        "--title-key",
        "headline",
    ];
    let article = root().join("samples/wiki-en").join(&docs[7].0);
    let query = |index: &Path| {
        let o = run(&["query", arg(index), arg(&article), "--json"]);
        json_lines(&stdout(&o))[0].clone()
    };
    for input in [&jsonl, &parquet] {
        let index = dir.path().join("keys.pdx");
        let mut args = vec!["build", arg(input), "-o", arg(&index)];
        args.extend(keys);
        run(&args);
        let best = query(&index);
        assert_eq!(best["id"], json!(docs[7].0), "{}", input.display());
        assert_eq!(best["title"], json!("Title 7"));
        assert_eq!(best["score"], json!(1.0));
        // The same keys for the other commands that read documents: dups.
        let mut args = vec!["dups", arg(input), "--method", "exact", "--json"];
        args.extend(keys);
        let o = pocketdex(&args);
        let summary = json_lines(&stdout(&o)).pop().unwrap();
        assert_eq!(summary["documents"], json!(40), "{}", stderr(&o));
    }
    // And synth, from the Parquet file: the originals under their ids, then no copies.
    let synth = dir.path().join("synth.jsonl");
    let mut args = vec!["synth", arg(&parquet), "--share", "0", "-o", arg(&synth)];
    args.extend(keys);
    run(&args);
    let written = json_lines(&std::fs::read_to_string(&synth).unwrap());
    assert_eq!(written.len(), 40);
    assert_eq!(written[3]["id"], json!(docs[3].0));
    assert_eq!(written[3]["text"], json!(docs[3].1));
    // Without the keys, the JSON Lines records are read by their "text" field (the decoy)...
    let index = dir.path().join("default.pdx");
    let o = run(&["build", arg(&jsonl), "-o", arg(&index)]);
    assert!(
        stderr(&o).contains("indexed 40 documents"),
        "{}",
        stderr(&o)
    );
    let o = run(&["dups", arg(&jsonl), "--method", "exact", "--json", "-q"]);
    let groups = json_lines(&stdout(&o));
    assert_eq!(groups[0]["size"], json!(40), "all 40 are the decoy");
    assert_eq!(
        groups[0]["members"][0],
        json!(format!("{}:1", jsonl.display()))
    );
    // ... and the Parquet file has no "text" column: an error that lists the columns it has.
    let o = pocketdex(&["build", arg(&parquet), "-o", arg(&index)]);
    failed_with(&o, "no column \"text\" holds the documents' text; the file's columns: doc_id (Utf8), body (Utf8), headline (Utf8)");
    // Records without the text key are skipped and said to be.
    let o = pocketdex(&[
        "build",
        arg(&jsonl),
        "-o",
        arg(&index),
        "--text-key",
        "content",
    ]);
    failed_with(&o, "no \"content\" field");
    // An id key that no record has would name every record FILE:LINE: refused, as the Parquet
    // file refuses a missing column; nothing is written or added.
    let set = dir.path().join("set");
    for command in [
        vec!["build", arg(&jsonl), "-o", arg(&index)],
        vec!["add", arg(&set), arg(&jsonl)],
    ] {
        std::fs::remove_file(&index).ok();
        let o = pocketdex(&[&command[..], &["--text-key", "body", "--id-key", "docid"]].concat());
        failed_with(&o, "no record has a field \"docid\" (--id-key)");
        assert!(!index.exists() && !set.join("pocketdex-set.json").exists());
    }
    let help = stdout(&run(&["help", "build"]));
    for flag in [
        "--id-key <KEY>",
        "--text-key <KEY>",
        "--title-key <KEY>",
        ".parquet",
    ] {
        assert!(help.contains(flag), "{flag} not in `help build`:\n{help}");
    }
}

#[test]
fn ids_texts_and_nulls_read_as_json_lines_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let docs = samples();
    let index = dir.path().join("wiki.pdx");
    run(&["build", "samples/wiki-en", "-o", arg(&index)]);
    let text = |i: usize| docs[i].1.clone();
    let parquet = dir.path().join("odd.parquet");
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![
        Some(7),
        None,
        Some(-12),
        Some(40),
        Some(41),
    ]));
    let texts: ArrayRef = Arc::new(StringArray::from(vec![
        Some(text(0)),
        Some(text(1)),
        None,
        Some(" \n\t".to_string()),
        Some(format!("<html><body><p>{}</p></body></html>", text(2))),
    ]));
    write_parquet(
        &parquet,
        vec![("id", ids), ("text", texts)],
        Compression::SNAPPY,
        2,
    );
    let o = pocketdex(&["query", arg(&index), arg(&parquet), "--json", "--top", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    let queries: Vec<&Value> = lines.iter().filter(|l| l["type"] == "query").collect();
    let labels: Vec<&str> = queries
        .iter()
        .map(|q| q["query"].as_str().unwrap())
        .collect();
    let null_id = format!("{}:2", parquet.display());
    assert_eq!(labels, ["7", null_id.as_str(), "-12", "40", "41"]);
    assert_eq!(queries[2]["message"], json!("no text (\"text\" is null)"));
    assert_eq!(queries[3]["message"], json!("empty"));
    let hits: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "hit")
        .map(|h| (h["query"].as_str().unwrap(), h["id"].as_str().unwrap()))
        .collect();
    // The HTML row is read with its markup removed, and finds its article.
    assert_eq!(
        hits,
        [
            ("7", docs[0].0.as_str()),
            (null_id.as_str(), docs[1].0.as_str()),
            ("41", docs[2].0.as_str())
        ]
    );
    // The same records as JSON Lines get the same labels and messages (but line numbers).
    let jsonl = dir.path().join("odd.jsonl");
    let records = [
        json!({"id": 7, "text": text(0)}),
        json!({"text": text(1)}),
        json!({"id": -12, "text": null}),
        json!({"id": 40, "text": " \n\t"}),
    ];
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&jsonl, lines.join("\n")).unwrap();
    let o = pocketdex(&["query", arg(&index), arg(&jsonl), "--json", "--top", "1"]);
    let labels: Vec<String> = json_lines(&stdout(&o))
        .iter()
        .filter(|l| l["type"] == "query")
        .map(|q| q["query"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        labels,
        [
            "7".to_string(),
            format!("{}:2", jsonl.display()),
            "-12".into(),
            "40".into()
        ]
    );

    // A file that is not Parquet, and one of another type of text column: clear errors.
    let fake = dir.path().join("fake.parquet");
    std::fs::write(&fake, "id,text\n1,hello\n").unwrap();
    let o = pocketdex(&["build", arg(&fake), "-o", arg(&index)]);
    failed_with(
        &o,
        &format!("{}: not a Parquet file, or a damaged one", fake.display()),
    );
    let o = pocketdex(&[
        "build",
        arg(&parquet),
        "-o",
        arg(&index),
        "--text-key",
        "id",
    ]);
    failed_with(
        &o,
        "column \"id\" holds Int64 values; a text column must hold strings",
    );
}

/// `dups --output`'s rows, read back: (id, cluster_id, cluster_size, representative_id,
/// is_duplicate, score).
type Row = (String, i64, i64, String, bool, Option<f64>);

fn parquet_rows(path: &Path) -> Vec<Row> {
    read_parquet(path).iter().flat_map(batch_rows).collect()
}

fn batch_rows(batch: &RecordBatch) -> Vec<Row> {
    let schema = batch.schema();
    let types: Vec<(&str, &DataType, bool)> = schema
        .fields()
        .iter()
        .map(|f| (f.name().as_str(), f.data_type(), f.is_nullable()))
        .collect();
    assert_eq!(
        types,
        [
            ("id", &DataType::Utf8, false),
            ("cluster_id", &DataType::Int64, false),
            ("cluster_size", &DataType::Int64, false),
            ("representative_id", &DataType::Utf8, false),
            ("is_duplicate", &DataType::Boolean, false),
            ("score", &DataType::Float64, true),
        ]
    );
    let id = batch.column(0).as_string::<i32>();
    let cluster = batch.column(1).as_primitive::<Int64Type>();
    let size = batch.column(2).as_primitive::<Int64Type>();
    let rep = batch.column(3).as_string::<i32>();
    let dup = batch.column(4).as_boolean();
    let score = batch.column(5).as_primitive::<Float64Type>();
    (0..batch.num_rows())
        .map(|i| {
            (
                id.value(i).to_string(),
                cluster.value(i),
                size.value(i),
                rep.value(i).to_string(),
                dup.value(i),
                score.is_valid(i).then(|| score.value(i)),
            )
        })
        .collect()
}

/// Rows equal but for the last bit of a score that went through JSON (serde_json parses
/// decimals to within one unit in the last place).
fn assert_same(a: &Row, b: &Row) {
    let close = match (a.5, b.5) {
        (Some(x), Some(y)) => (x - y).abs() < 1e-12,
        (x, y) => x == y,
    };
    assert!(
        close && (&a.0, a.1, a.2, &a.3, a.4) == (&b.0, b.1, b.2, &b.3, b.4),
        "{a:?} != {b:?}"
    );
}

fn jsonl_rows(path: &Path) -> Vec<Row> {
    json_lines(&std::fs::read_to_string(path).unwrap())
        .iter()
        .map(|r| {
            let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(
                keys.len(),
                6,
                "id, cluster_id, cluster_size, representative_id, is_duplicate, score: {r}"
            );
            (
                r["id"].as_str().unwrap().to_string(),
                r["cluster_id"].as_i64().unwrap(),
                r["cluster_size"].as_i64().unwrap(),
                r["representative_id"].as_str().unwrap().to_string(),
                r["is_duplicate"].as_bool().unwrap(),
                r["score"].as_f64(),
            )
        })
        .collect()
}

#[test]
fn dups_writes_one_row_per_document_that_agrees_with_its_groups() {
    let dir = tempfile::tempdir().unwrap();
    let docs = samples();
    // The articles, then planted copies: the edited Jupiter, Abacus twice more (identical),
    // an empty record (skipped: no row).
    let edited = std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap();
    let abacus = docs.iter().find(|d| d.0 == "Abacus.txt").unwrap().1.clone();
    let mut records: Vec<Value> = docs
        .iter()
        .map(|(id, text)| json!({"id": id, "text": text}))
        .collect();
    records.insert(5, json!({"id": "copy of Abacus", "text": abacus}));
    records.push(json!({"id": "Jupiter, edited", "text": edited}));
    records.push(json!({"id": "empty", "text": ""}));
    records.push(json!({"id": "Abacus again", "text": abacus}));
    let input = dir.path().join("docs.jsonl");
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&input, lines.join("\n")).unwrap();

    let out = dir.path().join("rows.parquet");
    let o = pocketdex(&[
        "dups",
        arg(&input),
        "--method",
        "fuzzy",
        "--json",
        "-o",
        arg(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    let summary = lines.last().unwrap();
    let groups: Vec<&Value> = lines.iter().filter(|l| l["type"] == "group").collect();
    assert!(groups.len() >= 2, "{lines:?}");
    let rows = parquet_rows(&out);

    // One row per document read, in input order; the empty record has none.
    let read: Vec<&str> = records
        .iter()
        .filter(|r| r["id"] != "empty")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), read);
    assert_eq!(json!(rows.len()), summary["documents"]);

    // Every group's members share its number, size and first member; the others are
    // duplicates, with the best score of their pairs.
    let by_id: HashMap<&str, &Row> = rows.iter().map(|r| (r.0.as_str(), r)).collect();
    let mut in_groups = 0;
    for g in &groups {
        let members: Vec<&str> = g["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        in_groups += members.len();
        for (k, m) in members.iter().enumerate() {
            let best = g["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["a"] == *m || p["b"] == *m)
                .map(|p| p["score"].as_f64().unwrap())
                .fold(f64::MIN, f64::max);
            let expected: Row = (
                m.to_string(),
                g["group"].as_i64().unwrap(),
                members.len() as i64,
                members[0].to_string(),
                k > 0,
                Some(best),
            );
            assert_same(by_id[m], &expected);
        }
    }
    let abacus_row = by_id["Abacus again"];
    assert_eq!((abacus_row.3.as_str(), abacus_row.4), ("Abacus.txt", true));
    assert_eq!(by_id["Jupiter, edited"].3, "Jupiter.txt");
    // The others are clusters of one, numbered after the groups in input order.
    let singles: Vec<&Row> = rows.iter().filter(|r| r.2 == 1).collect();
    assert_eq!(singles.len(), rows.len() - in_groups);
    for (k, r) in singles.iter().enumerate() {
        assert_eq!((&r.3, r.4, r.5), (&r.0, false, None));
        assert_eq!(r.1, (groups.len() + k + 1) as i64);
    }
    // Keeping the rows that are not duplicates keeps one document per cluster.
    let kept = rows.iter().filter(|r| !r.4).count();
    assert_eq!(kept, singles.len() + groups.len());

    // The same rows as JSON Lines; without --json, stdout lists nothing.
    let out_jsonl = dir.path().join("rows.jsonl");
    let o = run(&[
        "dups",
        arg(&input),
        "--method",
        "fuzzy",
        "-o",
        arg(&out_jsonl),
    ]);
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains(&format!("wrote {} rows", rows.len())),
        "{}",
        stderr(&o)
    );
    let from_jsonl = jsonl_rows(&out_jsonl);
    assert_eq!(from_jsonl.len(), rows.len());
    for (a, b) in from_jsonl.iter().zip(&rows) {
        assert_same(a, b);
    }

    // Another extension is refused before anything is read.
    let o = pocketdex(&["dups", arg(&input), "-o", arg(&dir.path().join("rows.csv"))]);
    failed_with(&o, "name a .parquet or a .jsonl file");
    assert!(!dir.path().join("rows.csv").exists());
    // And the Parquet input gives the same rows as its JSON Lines twin.
    let (jsonl, parquets) = sample_files(dir.path());
    let from = |input: &Path, out: &str| {
        let out = dir.path().join(out);
        let o = pocketdex(&[
            "dups",
            arg(input),
            "--method",
            "exact",
            "-q",
            "-o",
            arg(&out),
        ]);
        // Exit 1: the articles hold no identical copies.
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        parquet_rows(&out)
    };
    let twin = from(&jsonl, "twin.parquet");
    assert_eq!(twin.len(), 300);
    assert_eq!(from(&parquets[1], "from-parquet.parquet"), twin);
}

/// A page whose CRC checksum does not match its bytes is an error, not damaged text indexed;
/// the same file undamaged (page checksums written by pyarrow, which the `parquet` crate
/// cannot write; see tests/data/README.md) builds.
#[test]
fn a_page_checksum_that_does_not_match_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c.pdx");
    let o = run(&["build", "tests/data/checksummed.parquet", "-o", arg(&out)]);
    assert!(stderr(&o).contains("indexed 3 documents"), "{}", stderr(&o));
    let o = pocketdex(&[
        "build",
        "tests/data/checksum-mismatch.parquet",
        "-o",
        arg(&out),
    ]);
    failed_with(&o, "CRC checksum mismatch");
}

/// Extensions in any case, `.ndjson` as JSON Lines, and a Parquet file under a JSON Lines name
/// refused by its magic bytes (it was read as thousands of invalid lines).
#[test]
fn inputs_are_told_by_their_extension_in_any_case() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x.pdx");
    let upper = tmp.path().join("UPPER.PARQUET");
    std::fs::copy(root().join("tests/data/checksummed.parquet"), &upper).unwrap();
    let o = run(&["build", arg(&upper), "-o", arg(&out)]);
    assert!(stderr(&o).contains("indexed 3 documents"), "{}", stderr(&o));
    let nd = tmp.path().join("d.ndjson");
    std::fs::write(
        &nd,
        "{\"id\": \"a\", \"text\": \"one two\"}\n{\"id\": \"b\", \"text\": \"three\"}\n",
    )
    .unwrap();
    let o = run(&["build", arg(&nd), "-o", arg(&out)]);
    assert!(stderr(&o).contains("indexed 2 documents"), "{}", stderr(&o));
    let wrong = tmp.path().join("p.jsonl");
    std::fs::copy(root().join("tests/data/checksummed.parquet"), &wrong).unwrap();
    let o = pocketdex(&["build", arg(&wrong), "-o", arg(&out)]);
    failed_with(
        &o,
        "is a Parquet file (it begins with PAR1); name it .parquet",
    );
}

/// An integer title column is read as JSON Lines reads a number title: its decimal text.
#[test]
fn an_integer_title_column_is_its_decimal_text() {
    let tmp = tempfile::tempdir().unwrap();
    let parquet = tmp.path().join("t.parquet");
    let docs = samples();
    let texts: ArrayRef = Arc::new(StringArray::from(vec![
        docs[0].1.as_str(),
        docs[1].1.as_str(),
    ]));
    let ids: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
    let titles: ArrayRef = Arc::new(Int64Array::from(vec![Some(1984), None]));
    write_parquet(
        &parquet,
        vec![("id", ids), ("text", texts), ("title", titles)],
        Compression::SNAPPY,
        10,
    );
    let index = tmp.path().join("t.pdx");
    run(&["build", arg(&parquet), "-o", arg(&index)]);
    let doc = tmp.path().join("q.txt");
    std::fs::write(&doc, &docs[0].1).unwrap();
    let o = run(&["query", arg(&index), arg(&doc), "--json", "--top", "1"]);
    let hit = &json_lines(&stdout(&o))[0];
    assert_eq!(
        (hit["id"].as_str(), hit["title"].as_str()),
        (Some("a"), Some("1984"))
    );
}
