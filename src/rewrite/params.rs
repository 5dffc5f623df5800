//! Parameter conversions: renames and value conversions applied alike to query strings, form bodies and JSON
//! bodies. Pure functions, no I/O.
//!
//! Query and form parameters are `(name, value)` pairs that keep their `[]` array suffix (`iid[]`); JSON bodies
//! name the same arrays without it (`"iid": [1, 2]`), so JSON keys are matched with the suffix removed.

use serde_json::{Map, Value};

use super::rule::{Conversion, Converter};

/// A parameter value the gateway cannot convert.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{param} does not have a valid value")]
pub struct ParamError {
    /// The V3 parameter at fault.
    pub param: String,
}

fn json_key(name: &str) -> &str {
    name.strip_suffix("[]").unwrap_or(name)
}

fn truthy(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(flag) => Some(*flag),
        Value::Number(number) => number.as_i64().map(|n| n != 0),
        Value::String(text) => match text.to_ascii_lowercase().as_str() {
            "true" | "t" | "1" | "yes" | "on" => Some(true),
            "false" | "f" | "0" | "no" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn visibility_name(value: &Value) -> Option<Value> {
    let level = match value {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    };
    match level {
        Some(0) => Some(Value::from("private")),
        Some(10) => Some(Value::from("internal")),
        Some(20) => Some(Value::from("public")),
        _ => None,
    }
}

/// Converts one value; `param` names it in the error. `None` means the parameter is left out.
pub fn convert_value(converter: Converter, value: &Value, param: &str) -> Result<Option<Value>, ParamError> {
    let invalid = || ParamError {
        param: param.to_owned(),
    };
    match converter {
        Converter::VisibilityLevel => match value {
            Value::Array(items) => items
                .iter()
                .map(|item| visibility_name(item).ok_or_else(invalid))
                .collect::<Result<Vec<_>, _>>()
                .map(|names| Some(Value::Array(names))),
            single => visibility_name(single).map(Some).ok_or_else(invalid),
        },
        Converter::PublicFlag => match truthy(value) {
            Some(true) => Ok(Some(Value::from("public"))),
            Some(false) => Ok(Some(Value::from("private"))),
            None => Err(invalid()),
        },
        Converter::Negate => truthy(value)
            .map(|flag| Some(Value::Bool(!flag)))
            .ok_or_else(invalid),
        Converter::SkipConfirmation => match truthy(value) {
            Some(true) => Ok(None),
            Some(false) => Ok(Some(Value::Bool(true))),
            None => Err(invalid()),
        },
    }
}

fn as_text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// Applies conversions to `(name, value)` pairs (a query string or a form body).
pub fn convert_pairs(
    mut pairs: Vec<(String, String)>,
    conversions: &[Conversion],
) -> Result<Vec<(String, String)>, ParamError> {
    // `unless` looks at what the client sent, not at what earlier conversions produced.
    let sent: Vec<String> = pairs.iter().map(|(name, _)| name.clone()).collect();
    for conversion in conversions {
        if !pairs.iter().any(|(name, _)| *name == conversion.from) {
            continue;
        }
        let overridden = conversion
            .unless
            .as_ref()
            .is_some_and(|other| sent.contains(other));
        if overridden {
            pairs.retain(|(name, _)| *name != conversion.from);
            continue;
        }
        if conversion.with.is_some() && conversion.from != conversion.to {
            pairs.retain(|(name, _)| *name != conversion.to);
        }
        let mut converted = Vec::with_capacity(pairs.len());
        for (name, value) in pairs {
            if name != conversion.from {
                converted.push((name, value));
                continue;
            }
            let value = match conversion.with {
                Some(converter) => convert_value(converter, &Value::from(value.as_str()), &conversion.from)?,
                None => Some(Value::String(value)),
            };
            if let Some(value) = value {
                converted.push((conversion.to.clone(), as_text(value)));
            }
        }
        pairs = converted;
    }
    Ok(pairs)
}

/// Applies conversions to the top level of a JSON object body.
pub fn convert_json(
    mut object: Map<String, Value>,
    conversions: &[Conversion],
) -> Result<Map<String, Value>, ParamError> {
    // `unless` looks at what the client sent, not at what earlier conversions produced.
    let sent: Vec<String> = object.keys().cloned().collect();
    for conversion in conversions {
        let from = json_key(&conversion.from);
        let Some(value) = object.remove(from) else {
            continue;
        };
        if conversion
            .unless
            .as_deref()
            .is_some_and(|other| sent.iter().any(|name| name == json_key(other)))
        {
            continue;
        }
        let value = match conversion.with {
            Some(converter) => convert_value(converter, &value, &conversion.from)?,
            None => Some(value),
        };
        if let Some(value) = value {
            object.insert(json_key(&conversion.to).to_owned(), value);
        }
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::util::url_parts::{encode_pairs, parse_pairs};
    use proptest::prelude::*;
    use serde_json::json;

    fn project_write() -> Vec<Conversion> {
        vec![
            Conversion {
                from: "builds_enabled".into(),
                to: "jobs_enabled".into(),
                with: None,
                unless: None,
            },
            Conversion {
                from: "visibility_level".into(),
                to: "visibility".into(),
                with: Some(Converter::VisibilityLevel),
                unless: None,
            },
            Conversion {
                from: "public".into(),
                to: "visibility".into(),
                with: Some(Converter::PublicFlag),
                unless: Some("visibility_level".into()),
            },
        ]
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn visibility_level_and_renames_apply_to_form_pairs() {
        let out = convert_pairs(
            pairs(&[
                ("name", "x"),
                ("visibility_level", "10"),
                ("builds_enabled", "false"),
            ]),
            &project_write(),
        )
        .unwrap();
        assert_eq!(
            out,
            pairs(&[
                ("name", "x"),
                ("visibility", "internal"),
                ("jobs_enabled", "false")
            ])
        );
    }

    #[test]
    fn public_is_ignored_when_visibility_level_is_present() {
        let out = convert_pairs(
            pairs(&[("public", "true"), ("visibility_level", "0")]),
            &project_write(),
        )
        .unwrap();
        assert_eq!(out, pairs(&[("visibility", "private")]));
        let out = convert_json(
            json!({"public": true, "visibility_level": 0})
                .as_object()
                .unwrap()
                .clone(),
            &project_write(),
        )
        .unwrap();
        assert_eq!(Value::Object(out), json!({"visibility": "private"}));
    }

    #[test]
    fn public_is_ignored_whichever_order_the_client_sent_them_in() {
        let out = convert_pairs(
            pairs(&[("visibility_level", "10"), ("public", "true")]),
            &project_write(),
        )
        .unwrap();
        assert_eq!(out, pairs(&[("visibility", "internal")]));
        let body = json!({"visibility_level": 10, "public": true})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            Value::Object(convert_json(body, &project_write()).unwrap()),
            json!({"visibility": "internal"})
        );
    }

    #[test]
    fn public_false_means_private_never_internal() {
        let out = convert_json(
            json!({"public": false}).as_object().unwrap().clone(),
            &project_write(),
        )
        .unwrap();
        assert_eq!(out["visibility"], json!("private"));
    }

    #[test]
    fn array_renames_match_json_keys_without_the_suffix() {
        let rename = [Conversion {
            from: "iid[]".into(),
            to: "iids[]".into(),
            with: None,
            unless: None,
        }];
        let out = convert_json(json!({"iid": [1, 2]}).as_object().unwrap().clone(), &rename).unwrap();
        assert_eq!(Value::Object(out), json!({"iids": [1, 2]}));
        let out = convert_pairs(pairs(&[("iid[]", "1"), ("iid[]", "2")]), &rename).unwrap();
        assert_eq!(out, pairs(&[("iids[]", "1"), ("iids[]", "2")]));
    }

    #[test]
    fn confirm_false_skips_confirmation_and_confirm_true_is_left_out() {
        let confirm = [Conversion {
            from: "confirm".into(),
            to: "skip_confirmation".into(),
            with: Some(Converter::SkipConfirmation),
            unless: None,
        }];
        assert_eq!(
            convert_pairs(pairs(&[("confirm", "false")]), &confirm).unwrap(),
            pairs(&[("skip_confirmation", "true")])
        );
        assert_eq!(
            convert_pairs(pairs(&[("confirm", "true")]), &confirm).unwrap(),
            pairs(&[])
        );
    }

    #[test]
    fn visibility_level_lists_convert_item_by_item() {
        let levels = [Conversion {
            from: "restricted_visibility_levels".into(),
            to: "restricted_visibility_levels".into(),
            with: Some(Converter::VisibilityLevel),
            unless: None,
        }];
        let body = json!({"restricted_visibility_levels": [0, 20]})
            .as_object()
            .unwrap()
            .clone();
        let out = convert_json(body, &levels).unwrap();
        assert_eq!(out["restricted_visibility_levels"], json!(["private", "public"]));
    }

    #[test]
    fn invalid_values_name_the_parameter() {
        let error = convert_pairs(pairs(&[("visibility_level", "5")]), &project_write()).unwrap_err();
        assert_eq!(error.to_string(), "visibility_level does not have a valid value");
    }

    proptest! {
        #[test]
        fn any_query_text_converts_without_panicking(text in ".{0,200}") {
            let parsed = parse_pairs(text.as_bytes());
            let _ = convert_pairs(parsed.clone(), &project_write());
            let reparsed = parse_pairs(encode_pairs(&parsed).as_bytes());
            prop_assert_eq!(reparsed, parsed);
        }

        #[test]
        fn any_json_value_converts_without_panicking(level in any::<i64>(), flag in any::<bool>(), text in ".{0,20}") {
            let body = json!({"visibility_level": level, "public": flag, "builds_enabled": text});
            let result = convert_json(body.as_object().unwrap().clone(), &project_write());
            prop_assert_eq!(result.is_ok(), [0, 10, 20].contains(&level));
        }
    }
}
