//! Every numeric configuration field declares its range (`#[field(min, max)]`).

use numaplace_core::component::{SchedulerConfig, WorkloadConfig};
use numaplace_core::fields::{flatten, FieldInfo, Fields};
use numaplace_core::{PolicyConfig, ReportConfig};
use serde_json::Value;

/// The dotted fields whose default value is a number but which declare no range.
fn unranged(declared: &[FieldInfo], defaults: &Value) -> Vec<String> {
    flatten(declared)
        .into_iter()
        .filter(|(name, f)| {
            let v = name.split('.').try_fold(defaults, |v, k| v.get(k));
            matches!(v, Some(Value::Number(_))) && f.min.is_none() && f.max.is_none()
        })
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn every_numeric_field_of_every_component_declares_a_range() {
    let mut missing = Vec::new();
    for c in WorkloadConfig::all() {
        let v = serde_json::to_value(&c).unwrap();
        missing.extend(
            unranged(c.fields(), &v)
                .into_iter()
                .map(|f| format!("workload {}: {f}", c.kind())),
        );
    }
    for c in PolicyConfig::all() {
        let v = serde_json::to_value(&c).unwrap();
        missing.extend(
            unranged(c.fields(), &v)
                .into_iter()
                .map(|f| format!("policy {}: {f}", c.kind())),
        );
    }
    for c in SchedulerConfig::all() {
        let v = serde_json::to_value(&c).unwrap();
        missing.extend(
            unranged(c.fields(), &v)
                .into_iter()
                .map(|f| format!("scheduler {}: {f}", c.kind())),
        );
    }
    let v = serde_json::to_value(ReportConfig::default()).unwrap();
    missing.extend(unranged(ReportConfig::fields(), &v));
    assert!(missing.is_empty(), "fields without a range: {missing:?}");
}

#[test]
fn every_default_configuration_is_inside_its_declared_ranges() {
    for c in WorkloadConfig::all() {
        assert_eq!(c.check_ranges("workload"), Ok(()), "{}", c.kind());
    }
    for c in PolicyConfig::all() {
        assert_eq!(c.check_ranges("policy"), Ok(()), "{}", c.kind());
    }
    for c in SchedulerConfig::all() {
        assert_eq!(c.check_ranges("scheduler"), Ok(()), "{}", c.kind());
    }
}
