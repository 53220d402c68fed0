//! The contract between the core and its callers, as the core itself states it: a JSON Schema of
//! what it accepts (the run configuration, with every bound from `bounds.rs`), of what a run
//! returns, of each other answer, and the list of its error kinds. Python's models are checked
//! against this document field by field (names, types, defaults, bounds), so neither side can
//! drift without a failing test.

use schemars::schema::RootSchema;
use schemars::schema_for;
use serde_json::{json, Map, Value};

use crate::bounds::BOUNDS;
use crate::config::RunConfig;
use crate::engine::ServerFacts;
use crate::error::{samples, KINDS};
use crate::micro::cpu::CpuScore;
use crate::micro::net::{RequestResponse, Streams};
use crate::stats::{CountsAbove, HistogramFigures, IntervalSnapshot, RunResult};
use crate::workload::tpcc::check::CheckReport;
use crate::workload::{PrepareSummary, WorkloadInfo};

/// The whole contract as one JSON document.
pub fn contract() -> Value {
    json!({
        "config": config_schema(),
        "result": plain(schema_for!(RunResult)),
        "answers": {
            "interval": plain(schema_for!(IntervalSnapshot)),
            "prepare": plain(schema_for!(PrepareSummary)),
            "check": plain(schema_for!(CheckReport)),
            "probe": plain(schema_for!(ServerFacts)),
            "histogram_figures": plain(schema_for!(HistogramFigures)),
            "counts_above": plain(schema_for!(CountsAbove)),
            "micro_cpu": plain(schema_for!(CpuScore)),
            "micro_net_rr": plain(schema_for!(RequestResponse)),
            "micro_net_streams": plain(schema_for!(Streams)),
            "workload": plain(schema_for!(WorkloadInfo)),
        },
        "error_kinds": KINDS,
        "error_hints": error_hints(),
    })
}

/// Each error kind's hint, as a PostgreSQL target's error of that kind gives it.
fn error_hints() -> Map<String, Value> {
    samples()
        .iter()
        .map(|e| (e.kind().to_string(), Value::from(e.hint())))
        .collect()
}

fn plain(schema: RootSchema) -> Value {
    serde_json::to_value(schema).unwrap_or(Value::Null)
}

/// The configuration's schema with each bound written into its field.
fn config_schema() -> Value {
    let mut schema = plain(schema_for!(RunConfig));
    for bound in BOUNDS {
        let owner = if bound.owner == "RunConfig" {
            Some(&mut schema)
        } else {
            schema
                .get_mut("definitions")
                .and_then(|d| d.get_mut(bound.owner))
        };
        let field = owner
            .and_then(|o| o.get_mut("properties"))
            .and_then(|p| p.get_mut(bound.field))
            .and_then(Value::as_object_mut);
        if let Some(field) = field {
            set_bounds(field, bound.keywords());
        }
    }
    schema
}

fn set_bounds(field: &mut Map<String, Value>, keywords: Vec<(&'static str, Value)>) {
    for (key, value) in keywords {
        field.insert(key.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_lands_on_a_field_of_the_schema() {
        let schema = config_schema();
        for bound in BOUNDS {
            let owner = if bound.owner == "RunConfig" {
                &schema
            } else {
                &schema["definitions"][bound.owner]
            };
            let field = &owner["properties"][bound.field];
            assert!(
                field.get("maximum").is_some() || bound.max.is_none(),
                "{bound:?}"
            );
            assert!(
                field.get("minimum").is_some() || field.get("exclusiveMinimum").is_some(),
                "{bound:?}"
            );
        }
    }

    #[test]
    fn the_contract_names_every_answer_and_error_kind() {
        let document = contract();
        assert_eq!(document["config"]["title"], "RunConfig");
        assert_eq!(document["result"]["title"], "RunResult");
        assert_eq!(document["answers"]["probe"]["title"], "ServerFacts");
        assert_eq!(
            document["error_kinds"].as_array().unwrap().len(),
            KINDS.len()
        );
    }
}
