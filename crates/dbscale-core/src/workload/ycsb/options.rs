//! A core workload's properties, checked once and resolved into what the clients use.

use crate::workload::Params;
use crate::Error;

/// The operations, in the order YCSB's `createOperationGenerator` adds them (the order the
/// mix's draws are compared in) and of the run's transaction types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Read = 0,
    Update = 1,
    Insert = 2,
    Scan = 3,
    ReadModifyWrite = 4,
}

pub const OPERATIONS: [Operation; 5] = [
    Operation::Read,
    Operation::Update,
    Operation::Insert,
    Operation::Scan,
    Operation::ReadModifyWrite,
];

/// The run's transaction types, one per operation.
pub const TRANSACTION_TYPES: &[&str] = &["read", "update", "insert", "scan", "read_modify_write"];

const PROPORTIONS: [&str; 5] = [
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
];

/// `requestdistribution`: how keys are chosen for reads, updates and scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    Uniform,
    Zipfian,
    Latest,
    Hotspot,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub table: String,
    pub record_count: u64,
    pub operation_count: u64,
    pub field_count: u32,
    pub field_length: u32,
    pub read_all_fields: bool,
    pub write_all_fields: bool,
    /// Each operation's share, summing to 1 (YCSB divides by the sum as it draws).
    pub mix: [f64; 5],
    pub request: Request,
    pub zipfian_constant: f64,
    pub min_scan: u64,
    pub max_scan: u64,
    pub scan_zipfian: bool,
    pub ordered_inserts: bool,
    pub zero_padding: usize,
    pub insert_start: u64,
    pub hot_data: f64,
    pub hot_ops: f64,
}

impl Options {
    pub fn resolve(name: &str, p: &Params) -> Result<Self, Error> {
        let bad = |what: String| Error::Config(format!("{name}: {what}"));
        let count = |key: &str, least: i64, most: i64| -> Result<i64, Error> {
            let v = p.int(key);
            if v < least || v > most {
                return Err(bad(format!("{key} must be {least} to {most}, got {v}")));
            }
            Ok(v)
        };
        let fraction = |key: &str| -> Result<f64, Error> {
            let v = p.float(key);
            if !(0.0..=1.0).contains(&v) {
                return Err(bad(format!("{key} must be 0 to 1, got {v}")));
            }
            Ok(v)
        };
        let mut mix = [0.0; 5];
        for (share, key) in mix.iter_mut().zip(PROPORTIONS) {
            *share = fraction(key)?;
        }
        let total: f64 = mix.iter().sum();
        if total <= 0.0 {
            return Err(bad(format!(
                "the proportions ({}) add up to 0: nothing to run",
                PROPORTIONS.join(", ")
            )));
        }
        mix.iter_mut().for_each(|share| *share /= total);
        let request = match p.str("requestdistribution") {
            "uniform" => Request::Uniform,
            "zipfian" => Request::Zipfian,
            "latest" => Request::Latest,
            "hotspot" => Request::Hotspot,
            other => {
                return Err(bad(format!(
                    "requestdistribution must be uniform, zipfian, latest or hotspot, got {other:?}"
                )))
            }
        };
        let theta = p.float("zipfianconstant");
        if !(theta > 0.0 && theta < 1.0) {
            return Err(bad(format!(
                "zipfianconstant must be above 0 and below 1 (YCSB's method divides by 1 - theta), got {theta}"
            )));
        }
        let scan_zipfian = match p.str("scanlengthdistribution") {
            "uniform" => false,
            "zipfian" => true,
            other => {
                return Err(bad(format!(
                    "scanlengthdistribution must be uniform or zipfian, got {other:?}"
                )))
            }
        };
        let ordered_inserts = match p.str("insertorder") {
            "hashed" => false,
            "ordered" => true,
            other => {
                return Err(bad(format!(
                    "insertorder must be hashed or ordered, got {other:?}"
                )))
            }
        };
        let table = p.str("table").to_string();
        let plain = table
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && table.len() <= 63;
        if !plain {
            return Err(bad(format!(
                "table must be a plain name (letters, digits, _), got {table:?}"
            )));
        }
        let min_scan = count("minscanlength", 1, 1_000_000)? as u64;
        let max_scan = count("maxscanlength", 1, 1_000_000)? as u64;
        if min_scan > max_scan {
            return Err(bad(format!(
                "minscanlength {min_scan} is above maxscanlength {max_scan}"
            )));
        }
        Ok(Self {
            table,
            record_count: count("recordcount", 1, 1_000_000_000_000)? as u64,
            operation_count: count("operationcount", 0, i64::MAX)? as u64,
            field_count: count("fieldcount", 1, 1_000)? as u32,
            field_length: count("fieldlength", 1, 1_000_000)? as u32,
            read_all_fields: p.bool("readallfields"),
            write_all_fields: p.bool("writeallfields"),
            mix,
            request,
            zipfian_constant: theta,
            min_scan,
            max_scan,
            scan_zipfian,
            ordered_inserts,
            zero_padding: count("zeropadding", 1, 40)? as usize,
            insert_start: count("insertstart", 0, 1_000_000_000_000)? as u64,
            hot_data: fraction("hotspotdatafraction")?,
            hot_ops: fraction("hotspotopnfraction")?,
        })
    }

    /// Keys YCSB's Zipfian chooser spans beyond the loaded ones: the inserts a run of
    /// `operationcount` operations is expected to make, twice over.
    pub fn expected_new_keys(&self) -> u64 {
        (self.operation_count as f64 * self.mix[Operation::Insert as usize] * 2.0) as u64
    }

    pub fn inserts(&self) -> bool {
        self.mix[Operation::Insert as usize] > 0.0
    }
}
