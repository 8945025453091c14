//! Inspecting generated CRD schemas: are they structural, what CEL rules do they carry, and are
//! the values those rules see bounded.
//!
//! [`crd_schema`] generates a type's schema with the settings and transforms kube's
//! `CustomResource` derive uses for a CRD, so what the tests see here is what the apiserver
//! gets. The checks are a subset of the apiserver's (structural schema rules, CEL cost bounds),
//! meant to fail fast in unit tests; the apiserver remains the judge.

use schemars::JsonSchema;
use serde_json::Value;

/// The schema of `T` as kube's `CustomResource` derive puts it into a CRD (OpenAPI v3,
/// subschemas inlined, structural rewrites applied), as JSON.
pub fn crd_schema<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(kube_core::schema::StructuralSchemaRewriter)
        .with_transform(kube_core::schema::OptionalEnum)
        .with_transform(kube_core::schema::OptionalIntOrString)
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// One `x-kubernetes-validations` entry found in a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundRule {
    /// Where the rule sits, as a dotted property path (`.` is the root, `[]` a list item,
    /// `{}` a map value), e.g. `.endpointAccess.publicCIDRs`.
    pub path: String,
    /// The CEL expression.
    pub rule: String,
    /// `message`, if set.
    pub message: Option<String>,
    /// `messageExpression`, if set.
    pub message_expression: Option<String>,
}

fn child(path: &str, segment: &str) -> String {
    if path == "." {
        format!(".{segment}")
    } else {
        format!("{path}.{segment}")
    }
}

/// Visits every schema node with its path.
fn walk<'a>(schema: &'a Value, path: &str, visit: &mut dyn FnMut(&str, &'a Value)) {
    visit(path, schema);
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            walk(sub, &child(path, name), visit);
        }
    }
    if let Some(items) = obj.get("items") {
        walk(items, &format!("{path}[]"), visit);
    }
    if let Some(additional) = obj.get("additionalProperties")
        && additional.is_object()
    {
        walk(additional, &format!("{path}{{}}"), visit);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(subs) = obj.get(key).and_then(Value::as_array) {
            for sub in subs {
                walk(sub, path, visit);
            }
        }
    }
}

/// Every CEL rule in `schema`, in document order.
pub fn validation_rules(schema: &Value) -> Vec<FoundRule> {
    let mut found = Vec::new();
    walk(schema, ".", &mut |path, node| {
        let rules = node
            .get("x-kubernetes-validations")
            .and_then(Value::as_array);
        for r in rules.into_iter().flatten() {
            let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
            found.push(FoundRule {
                path: path.to_owned(),
                rule: text("rule").unwrap_or_default(),
                message: text("message"),
                message_expression: text("messageExpression"),
            });
        }
    });
    found
}

fn is_int_or_string(node: &Value) -> bool {
    node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
}

fn preserves_unknown(node: &Value) -> bool {
    node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
}

/// Violations of the Kubernetes structural-schema rules this crate's types could plausibly
/// break, each as `"<path>: <problem>"`; empty when none.
///
/// Checked: every node has a `type` (unless int-or-string or preserving unknown fields); no
/// `$ref`, `definitions` or `$defs`; `anyOf`/`allOf`/`oneOf` branches set no `type`,
/// `description`, `default`, `nullable` or `additionalProperties` (bar the int-or-string
/// exception); `properties` and `additionalProperties` are not both set; no `uniqueItems: true`.
pub fn structural_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for key in ["definitions", "$defs"] {
        if schema.get(key).is_some() {
            problems.push(format!(".: has {key}"));
        }
    }
    walk_nodes(schema, ".", false, &mut problems);
    problems
}

fn walk_nodes(node: &Value, path: &str, in_junctor: bool, problems: &mut Vec<String>) {
    let Some(obj) = node.as_object() else {
        return;
    };
    if obj.contains_key("$ref") {
        problems.push(format!("{path}: uses $ref"));
    }
    if in_junctor {
        for forbidden in [
            "type",
            "description",
            "default",
            "nullable",
            "additionalProperties",
        ] {
            if obj.contains_key(forbidden) {
                problems.push(format!("{path}: sets {forbidden} inside anyOf/allOf/oneOf"));
            }
        }
    } else if !obj.contains_key("type") && !is_int_or_string(node) && !preserves_unknown(node) {
        problems.push(format!("{path}: has no type"));
    }
    if obj.contains_key("properties")
        && obj
            .get("additionalProperties")
            .is_some_and(Value::is_object)
    {
        problems.push(format!(
            "{path}: sets both properties and additionalProperties"
        ));
    }
    if obj.get("uniqueItems") == Some(&Value::Bool(true)) {
        problems.push(format!("{path}: sets uniqueItems"));
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            walk_nodes(sub, &child(path, name), false, problems);
        }
    }
    if let Some(items) = obj.get("items") {
        walk_nodes(items, &format!("{path}[]"), false, problems);
    }
    if let Some(additional) = obj.get("additionalProperties")
        && additional.is_object()
    {
        walk_nodes(additional, &format!("{path}{{}}"), false, problems);
    }
    let int_or_string_branches = is_int_or_string(node);
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(subs) = obj.get(key).and_then(Value::as_array) {
            for sub in subs {
                let exception = int_or_string_branches
                    && key == "anyOf"
                    && matches!(
                        sub.get("type").and_then(Value::as_str),
                        Some("integer" | "string")
                    );
                if !exception {
                    walk_nodes(sub, path, true, problems);
                }
            }
        }
    }
}

/// Values the CEL cost estimator would have to assume unbounded, each as `"<path>: <what>"`:
/// lists without `maxItems`, maps without `maxProperties`, strings without `maxLength` (an
/// `enum` or `format: date-time` bounds a string too). Empty when every value is bounded.
pub fn unbounded_values(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    walk(schema, ".", &mut |path, node| {
        let has = |k: &str| node.get(k).is_some();
        match node.get("type").and_then(Value::as_str) {
            Some("array") if !has("maxItems") => {
                found.push(format!("{path}: list without maxItems"))
            }
            Some("object")
                if node
                    .get("additionalProperties")
                    .is_some_and(Value::is_object)
                    && !has("maxProperties") =>
            {
                found.push(format!("{path}: map without maxProperties"))
            }
            Some("string")
                if !has("maxLength")
                    && !has("enum")
                    && node.get("format").and_then(Value::as_str) != Some("date-time") =>
            {
                found.push(format!("{path}: string without maxLength"))
            }
            _ => {}
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_are_found_with_their_paths_and_messages() {
        let schema = json!({
            "type": "object",
            "x-kubernetes-validations": [{"rule": "a", "message": "m"}],
            "properties": {
                "list": {"type": "array", "items": {"type": "string",
                    "x-kubernetes-validations": [{"rule": "b", "messageExpression": "'e'"}]}}
            }
        });
        let rules = validation_rules(&schema);
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].path, ".");
        assert_eq!(rules[0].message.as_deref(), Some("m"));
        assert_eq!(rules[1].path, ".list[]");
        assert_eq!(rules[1].message_expression.as_deref(), Some("'e'"));
    }

    #[test]
    fn structural_problems_are_reported() {
        let bad = json!({
            "type": "object",
            "properties": {
                "untyped": {"description": "x"},
                "ref": {"$ref": "#/x", "type": "object"},
                "junctor": {"type": "string", "anyOf": [{"type": "string"}]},
                "set": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            }
        });
        let problems = structural_problems(&bad);
        assert_eq!(problems.len(), 4, "{problems:?}");
        let ok = json!({"type": "object", "properties": {
            "ios": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}
        }});
        assert!(structural_problems(&ok).is_empty());
    }

    #[test]
    fn unbounded_values_are_reported() {
        let schema = json!({"type": "object", "properties": {
            "s": {"type": "string"},
            "bounded": {"type": "string", "maxLength": 3},
            "e": {"type": "string", "enum": ["a"]},
            "l": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 1}},
            "m": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 1}}
        }});
        let mut found = unbounded_values(&schema);
        found.sort();
        assert_eq!(
            found,
            [
                ".m: map without maxProperties",
                ".s: string without maxLength"
            ]
        );
    }
}
