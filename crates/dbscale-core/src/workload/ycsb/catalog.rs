//! YCSB's core workloads A-F (`workloads/workload[a-f]` of YCSB 0.17) with their operation mixes
//! and request distributions as defaults, and the `CoreWorkload` properties each accepts under
//! YCSB's own names.

use crate::workload::{Family, ParamSpec, WorkloadInfo};

/// The properties every core workload accepts; the mix and the distribution default to the
/// workload file's.
macro_rules! ycsb_params {
    ($read:expr, $update:expr, $insert:expr, $scan:expr, $rmw:expr, $distribution:expr, $max_scan:expr) => {
        &[
            ParamSpec::int("recordcount", 1_000, "rows loaded by prepare (YCSB recordcount); a run reads the table's row count instead"),
            ParamSpec::int("operationcount", 1_000, "sizes the Zipfian key range for the inserts a run is expected to make (operationcount x insertproportion x 2 new keys, as YCSB); runs last --duration"),
            ParamSpec::float("readproportion", $read, "share of reads (YCSB readproportion)"),
            ParamSpec::float("updateproportion", $update, "share of updates of one field, or all with writeallfields (updateproportion)"),
            ParamSpec::float("insertproportion", $insert, "share of inserts of new keys (insertproportion)"),
            ParamSpec::float("scanproportion", $scan, "share of scans from a key (scanproportion)"),
            ParamSpec::float("readmodifywriteproportion", $rmw, "share of read-modify-writes: a read then an update of the same key (readmodifywriteproportion)"),
            ParamSpec::str("requestdistribution", $distribution, "keys read, updated and scanned: uniform, zipfian (YCSB's scrambled Zipfian, constant zipfianconstant), latest (the newest inserts most) or hotspot"),
            ParamSpec::float("zipfianconstant", 0.99, "the Zipfian's constant theta, 0 < theta < 1 (YCSB zipfianconstant)"),
            ParamSpec::int("fieldcount", 10, "fields per row, FIELD0..FIELDn-1 (fieldcount)"),
            ParamSpec::int("fieldlength", 100, "characters per field value (fieldlength)"),
            ParamSpec::bool("readallfields", true, "reads and scans return every field; off: one field (readallfields)"),
            ParamSpec::bool("writeallfields", false, "updates write every field; off: one field chosen uniformly (writeallfields)"),
            ParamSpec::int("minscanlength", 1, "shortest scan (minscanlength)"),
            ParamSpec::int("maxscanlength", $max_scan, "longest scan (maxscanlength: 100 in workload E's file, 1,000 otherwise)"),
            ParamSpec::str("scanlengthdistribution", "uniform", "scan lengths: uniform or zipfian (scanlengthdistribution)"),
            ParamSpec::str("insertorder", "hashed", "hashed: keys are user<FNV hash of the key number>, spread over the key space; ordered: user<number> (insertorder)"),
            ParamSpec::int("zeropadding", 1, "key numbers left-padded with zeros to this many digits (zeropadding)"),
            ParamSpec::int("insertstart", 0, "first key number loaded (insertstart)"),
            ParamSpec::float("hotspotdatafraction", 0.2, "hotspot: the share of keys that is hot (hotspotdatafraction)"),
            ParamSpec::float("hotspotopnfraction", 0.8, "hotspot: the share of operations on the hot keys (hotspotopnfraction)"),
            ParamSpec::str("table", "usertable", "the table's name (YCSB table)"),
        ]
    };
}

pub(super) struct Variant {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    description: &'static str,
    pub params: &'static [ParamSpec],
}

pub(super) const VARIANTS: &[Variant] = &[
    Variant {
        name: "ycsb:a",
        aliases: &["ycsb-a", "workloada"],
        description: "YCSB workload A, update heavy: 50% reads, 50% updates, Zipfian keys",
        params: ycsb_params!(0.5, 0.5, 0.0, 0.0, 0.0, "zipfian", 1_000),
    },
    Variant {
        name: "ycsb:b",
        aliases: &["ycsb-b", "workloadb"],
        description: "YCSB workload B, read mostly: 95% reads, 5% updates, Zipfian keys",
        params: ycsb_params!(0.95, 0.05, 0.0, 0.0, 0.0, "zipfian", 1_000),
    },
    Variant {
        name: "ycsb:c",
        aliases: &["ycsb-c", "workloadc"],
        description: "YCSB workload C, read only: 100% reads, Zipfian keys",
        params: ycsb_params!(1.0, 0.0, 0.0, 0.0, 0.0, "zipfian", 1_000),
    },
    Variant {
        name: "ycsb:d",
        aliases: &["ycsb-d", "workloadd"],
        description:
            "YCSB workload D, read latest: 95% reads, 5% inserts, the newest keys read most",
        params: ycsb_params!(0.95, 0.0, 0.05, 0.0, 0.0, "latest", 1_000),
    },
    Variant {
        name: "ycsb:e",
        aliases: &["ycsb-e", "workloade"],
        description: "YCSB workload E, short ranges: 95% scans of up to 100 rows, 5% inserts",
        params: ycsb_params!(0.0, 0.0, 0.05, 0.95, 0.0, "zipfian", 100),
    },
    Variant {
        name: "ycsb:f",
        aliases: &["ycsb-f", "workloadf"],
        description: "YCSB workload F, read-modify-write: 50% reads, 50% read-modify-writes",
        params: ycsb_params!(0.5, 0.0, 0.0, 0.0, 0.5, "zipfian", 1_000),
    },
];

pub fn catalog() -> Vec<WorkloadInfo> {
    VARIANTS
        .iter()
        .map(|v| WorkloadInfo {
            name: v.name,
            aliases: v.aliases,
            family: Family::Ycsb,
            description: v.description,
            params: v.params,
        })
        .collect()
}
