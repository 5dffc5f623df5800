//! Global ids (`gid://{identifier_word}/Issue/1000`): writing them, reading them with the service's three coercion
//! messages, and checking a request's `IssueID`-like arguments and variables before execution, so that a bad one
//! is a validation error (no `data`), as graphql-ruby's scalar coercion makes it.

use std::collections::HashSet;

use async_graphql::parser::types::{
    BaseType, DocumentOperations, ExecutableDocument, OperationDefinition, Selection, SelectionSet, Type,
};
use async_graphql::{Name, Pos, Positioned, Value as GqlValue, Variables};
use serde_json::{json, Value};

/// The models a global id can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// `Issue`.
    Issue,
    /// `MergeRequest`.
    MergeRequest,
    /// `Project`.
    Project,
    /// `User`.
    User,
}

impl Model {
    /// The model's name in a global id.
    pub fn name(self) -> &'static str {
        match self {
            Model::Issue => "Issue",
            Model::MergeRequest => "MergeRequest",
            Model::Project => "Project",
            Model::User => "User",
        }
    }

    /// The model whose `…ID` input scalar is named `scalar` (the schema has `IssueID` and `MergeRequestID`).
    fn of_scalar(scalar: &str) -> Option<Model> {
        match scalar {
            "IssueID" => Some(Model::Issue),
            "MergeRequestID" => Some(Model::MergeRequest),
            _ => None,
        }
    }
}

/// `gid://{word}/{Model}/{id}`.
pub fn format(word: &str, model: Model, id: u64) -> String {
    format!("gid://{word}/{}/{id}", model.name())
}

/// `svc` → `Svc`, as the service writes `Gitlab` in its messages.
fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Splits `gid://app/Model/id` into its parts; None when it is not one.
fn split(raw: &str) -> Option<(&str, &str, &str)> {
    let rest = raw.strip_prefix("gid://")?;
    let mut parts = rest.splitn(3, '/');
    let app = parts.next().filter(|s| !s.is_empty())?;
    let model = parts.next().filter(|s| !s.is_empty())?;
    let id = parts.next().filter(|s| !s.is_empty() && !s.contains('/'))?;
    Some((app, model, id))
}

/// Reads a global id of `model` as the service's `GlobalIDType[Model]` coerces it: the record's id (None when it
/// is not a number, so it names no record), or the coercion message.
pub fn parse_id(word: &str, raw: &str, model: Model) -> Result<Option<u64>, String> {
    let quoted = serde_json::to_string(raw).unwrap_or_default();
    let Some((app, named, id)) = split(raw) else {
        return Err(format!("{quoted} is not a valid Global ID"));
    };
    if app != word {
        return Err(format!("{quoted} is not a {} Global ID", capitalised(word)));
    }
    if named != model.name() {
        return Err(format!(
            "{quoted} does not represent an instance of {}",
            model.name()
        ));
    }
    Ok(id.parse().ok())
}

/// Reads a global id passed as a plain `ID` argument (`projects(ids:)`), as the service's `parse_gid` does: an
/// execution error when it is not one of `model`.
pub fn parse_argument(word: &str, raw: &str, model: Model) -> Result<Option<u64>, String> {
    match split(raw) {
        Some((app, named, id)) if app == word && named == model.name() => Ok(id.parse().ok()),
        Some(_) => Err(format!("{raw} is not a valid ID for {}.", model.name())),
        None => Err(format!("{raw} is not a valid {} ID.", capitalised(word))),
    }
}

/// The coercion errors of the operation that will run: variables declared as a global id type whose value is not
/// one, and literal `id` arguments of `Query.issue` and `Query.mergeRequest`. Empty when all is well (or the
/// operation cannot be chosen; the executor reports that).
pub fn check(
    word: &str,
    doc: &ExecutableDocument,
    operation_name: Option<&str>,
    variables: &Variables,
) -> Vec<Value> {
    let Some(op) = chosen(doc, operation_name) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    for def in &op.node.variable_definitions {
        let Some(model) = model_of(&def.node.var_type.node) else {
            continue;
        };
        let name = &def.node.name.node;
        let value = variables
            .get(name)
            .cloned()
            .or_else(|| def.node.default_value.as_ref().map(|v| v.node.clone()));
        let Some(value) = value else { continue };
        if let Some(explanation) = first_problem(word, &value, model) {
            errors.push(json!({
                "message": format!(
                    "Variable ${name} of type {} was provided invalid value",
                    def.node.var_type.node
                ),
                "locations": [location(def.pos)],
                "extensions": {
                    "value": value.into_json().unwrap_or(Value::Null),
                    "problems": [{"path": [], "explanation": explanation}],
                },
            }));
        }
    }
    let mut seen = HashSet::new();
    literal_problems(word, doc, &op.node.selection_set, &mut seen, &mut errors);
    errors
}

fn chosen<'a>(
    doc: &'a ExecutableDocument,
    name: Option<&str>,
) -> Option<&'a Positioned<OperationDefinition>> {
    match (&doc.operations, name) {
        (DocumentOperations::Single(op), _) => Some(op),
        (DocumentOperations::Multiple(ops), Some(name)) => ops.get(name),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => ops.values().next(),
        _ => None,
    }
}

/// The model of a (possibly non-null, possibly list) global id type.
fn model_of(ty: &Type) -> Option<Model> {
    match &ty.base {
        BaseType::Named(name) => Model::of_scalar(name.as_str()),
        BaseType::List(inner) => model_of(inner),
    }
}

/// The first coercion message of a value (a string or a list of them) for `model`.
fn first_problem(word: &str, value: &GqlValue, model: Model) -> Option<String> {
    match value {
        GqlValue::String(raw) => parse_id(word, raw, model).err(),
        GqlValue::List(items) => items.iter().find_map(|v| first_problem(word, v, model)),
        _ => None,
    }
}

fn location(pos: Pos) -> Value {
    json!({"line": pos.line, "column": pos.column})
}

/// Walks the root selection set (through fragments) for `issue(id: "…")` and `mergeRequest(id: "…")` literals.
fn literal_problems<'a>(
    word: &str,
    doc: &'a ExecutableDocument,
    set: &'a Positioned<SelectionSet>,
    seen: &mut HashSet<&'a Name>,
    errors: &mut Vec<Value>,
) {
    for item in &set.node.items {
        match &item.node {
            Selection::Field(field) => {
                let model = match field.node.name.node.as_str() {
                    "issue" => Model::Issue,
                    "mergeRequest" => Model::MergeRequest,
                    _ => continue,
                };
                for (name, value) in &field.node.arguments {
                    if name.node.as_str() != "id" {
                        continue;
                    }
                    if let Some(GqlValue::String(raw)) = value.node.clone().into_const() {
                        if let Err(message) = parse_id(word, &raw, model) {
                            let alias = field.node.response_key().node.as_str();
                            errors.push(json!({
                                "message": message,
                                "locations": [location(value.pos)],
                                "path": ["query", alias, "id"],
                                "extensions": {
                                    "code": "argumentLiteralsIncompatible",
                                    "typeName": "CoercionError",
                                },
                            }));
                        }
                    }
                }
            }
            Selection::InlineFragment(fragment) => {
                literal_problems(word, doc, &fragment.node.selection_set, seen, errors);
            }
            Selection::FragmentSpread(spread) => {
                let name = &spread.node.fragment_name.node;
                if !seen.insert(name) {
                    continue;
                }
                if let Some(fragment) = doc.fragments.get(name) {
                    literal_problems(word, doc, &fragment.node.selection_set, seen, errors);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_coercion_messages_and_a_good_id() {
        assert_eq!(
            parse_id("svc", "gid://svc/Issue/1000", Model::Issue),
            Ok(Some(1000))
        );
        assert_eq!(
            parse_id("svc", "gid://gitlab/Issue/1", Model::Issue),
            Err(r#""gid://gitlab/Issue/1" is not a Svc Global ID"#.to_string())
        );
        assert_eq!(
            parse_id("svc", "gid://svc/Project/1", Model::Issue),
            Err(r#""gid://svc/Project/1" does not represent an instance of Issue"#.to_string())
        );
        assert_eq!(
            parse_id("svc", "1000", Model::Issue),
            Err(r#""1000" is not a valid Global ID"#.to_string())
        );
        assert_eq!(parse_id("svc", "gid://svc/Issue/x", Model::Issue), Ok(None));
    }
}
