//! Reads rule files (`rules/*.toml`) into compiled [`Rule`]s and [`Shapes`], with file-and-line errors.
//!
//! A rule file may hold `release` (the default `since` of its rules), `[[rule]]` entries, named `[params.NAME]`
//! sets that rules share, `[entity.NAME]` shapes, and `[[auth]]` entries (V3's authentication, [`super::auth`]). Everything is checked before the gateway starts: unknown
//! keys, unknown entity, converter and procedure names, and V4 parameters the V3 path does not have.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use toml::Spanned;

use super::rule::{Conversion, Converter, Embed, GraphqlCollection, ItemFetch, Procedure, Route, Rule};
use super::shape::{Field, FieldConverter, Shape, Shapes, Source};
use crate::store::IdKind;

/// Every problem found in a set of rule files, each as `file:line: message`.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct LoadError(pub Vec<String>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    release: Option<String>,
    #[serde(default)]
    rule: Vec<Spanned<RawRule>>,
    #[serde(default)]
    params: BTreeMap<String, Spanned<RawParamSet>>,
    #[serde(default)]
    entity: BTreeMap<String, Spanned<RawEntity>>,
    /// `[[auth]]` entries, compiled by [`super::auth::AuthTable::compile`].
    #[serde(default)]
    #[allow(dead_code)]
    auth: Vec<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    v3: String,
    v4: Option<String>,
    since: Option<String>,
    section: String,
    #[serde(default)]
    params: Vec<String>,
    #[serde(default)]
    rename: BTreeMap<String, String>,
    #[serde(default)]
    convert: Vec<RawConversion>,
    #[serde(default)]
    add_query: BTreeMap<String, String>,
    #[serde(default)]
    add_body: BTreeMap<String, toml::Value>,
    #[serde(default)]
    drop_if: BTreeMap<String, String>,
    #[serde(default)]
    values: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    path_from_request: Vec<String>,
    #[serde(default)]
    ids: BTreeMap<String, String>,
    #[serde(default)]
    status: BTreeMap<String, u16>,
    response: Option<String>,
    #[serde(default)]
    response_when: BTreeMap<String, String>,
    response_anonymous: Option<String>,
    #[serde(default)]
    requires: Vec<String>,
    unseen: Option<RawUnseen>,
    collect: Option<String>,
    page_base: Option<u8>,
    #[serde(default)]
    prefetch: RawPrefetch,
    answer: Option<toml::Value>,
    item_fetch: Option<RawItemFetch>,
    embed: Option<RawEmbed>,
    procedure: Option<String>,
    refetch: Option<String>,
}

/// `prefetch = true` fetches the rule's own V4 path; `prefetch = "/path/:param"` another resource;
/// `prefetch = { path = "/list", id = "param" }` the item of a list whose `id` is the parameter's value (for
/// resources V4 can only list).
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum RawPrefetch {
    #[default]
    None,
    Flag(bool),
    Path(String),
    Find {
        path: String,
        id: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUnseen {
    status: u16,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawItemFetch {
    path: String,
    #[serde(default)]
    fields: Vec<String>,
    graphql: Option<String>,
}

/// The `graphql` key of an `item_fetch`: a known collection, completing fields its nodes carry, items named by
/// `{project_id}` and `{iid}`.
fn graphql_collection(name: &str, fetch: &RawItemFetch) -> Result<GraphqlCollection, String> {
    let collection = GraphqlCollection::parse(name).ok_or_else(|| {
        format!("item_fetch: graphql must be \"issues\" or \"merge_requests\", not {name:?}")
    })?;
    if fetch.fields.is_empty() {
        return Err("item_fetch: graphql completes fields; list them in `fields`".to_owned());
    }
    if let Some(field) = fetch
        .fields
        .iter()
        .find(|field| GraphqlCollection::node_field(field).is_none())
    {
        return Err(format!("item_fetch: graphql cannot complete the field {field:?}"));
    }
    if !(fetch.path.contains("{project_id}") && fetch.path.contains("{iid}")) {
        return Err("item_fetch: graphql needs items named by {project_id} and {iid} in the path".to_owned());
    }
    Ok(collection)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEmbed {
    field: String,
    path: String,
    entity: Option<String>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawConversion {
    from: String,
    to: String,
    with: Option<String>,
    unless: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParamSet {
    #[serde(default)]
    rename: BTreeMap<String, String>,
    #[serde(default)]
    convert: Vec<RawConversion>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntity {
    extends: Option<String>,
    fields: Vec<RawField>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawField {
    Name(String),
    Table(RawFieldTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFieldTable {
    name: String,
    from: Option<String>,
    with: Option<String>,
    value: Option<toml::Value>,
    #[serde(default)]
    always_null: bool,
    #[serde(default)]
    optional: bool,
    entity: Option<String>,
}

struct Parsed {
    name: String,
    text: String,
    file: RawFile,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}

/// Compiles rule files given as `(name, contents)` pairs into rules and shapes.
pub fn compile(sources: &[(String, String)]) -> Result<(Vec<Rule>, Shapes), LoadError> {
    let mut errors = Vec::new();
    let mut parsed = Vec::new();
    for (name, text) in sources {
        match toml::from_str::<RawFile>(text) {
            Ok(file) => parsed.push(Parsed {
                name: name.clone(),
                text: text.clone(),
                file,
            }),
            Err(error) => {
                let line = error.span().map_or(1, |span| line_of(text, span.start));
                errors.push(format!("{name}:{line}: {}", error.message()));
            }
        }
    }

    let mut raw_entities: HashMap<String, (String, &RawEntity)> = HashMap::new();
    let mut param_sets: HashMap<String, (String, &RawParamSet)> = HashMap::new();
    for file in &parsed {
        for (entity_name, entity) in &file.file.entity {
            let at = format!("{}:{}", file.name, line_of(&file.text, entity.span().start));
            if raw_entities
                .insert(entity_name.clone(), (at.clone(), entity.get_ref()))
                .is_some()
            {
                errors.push(format!("{at}: entity {entity_name:?} is defined twice"));
            }
        }
        for (set_name, set) in &file.file.params {
            let at = format!("{}:{}", file.name, line_of(&file.text, set.span().start));
            if param_sets
                .insert(set_name.clone(), (at.clone(), set.get_ref()))
                .is_some()
            {
                errors.push(format!("{at}: params set {set_name:?} is defined twice"));
            }
        }
    }

    let shapes = compile_shapes(&raw_entities, &mut errors);
    let mut rules = Vec::new();
    for file in &parsed {
        for raw in &file.file.rule {
            let at = format!("{}:{}", file.name, line_of(&file.text, raw.span().start));
            match compile_rule(
                raw.get_ref(),
                file.file.release.as_deref(),
                &at,
                &shapes,
                &param_sets,
            ) {
                Ok(rule) => rules.push(rule),
                Err(message) => errors.push(format!("{at}: {message}")),
            }
        }
    }
    if errors.is_empty() {
        Ok((rules, shapes))
    } else {
        Err(LoadError(errors))
    }
}

fn compile_shapes(raw: &HashMap<String, (String, &RawEntity)>, errors: &mut Vec<String>) -> Shapes {
    let mut shapes = HashMap::new();
    for (name, (at, entity)) in raw {
        let mut fields = Vec::new();
        let mut chain = Vec::new();
        let mut current = Some((name.as_str(), at.as_str(), *entity));
        while let Some((current_name, current_at, current_entity)) = current {
            if chain.contains(&current_name) {
                errors.push(format!("{at}: entity {name:?} extends itself"));
                break;
            }
            chain.push(current_name);
            let mut own = Vec::new();
            for field in &current_entity.fields {
                match compile_field(field, raw) {
                    Ok(field) => own.push(field),
                    Err(message) if current_name == name => errors.push(format!("{current_at}: {message}")),
                    Err(_) => {}
                }
            }
            own.extend(fields);
            fields = own;
            current = match &current_entity.extends {
                Some(parent) => match raw.get(parent) {
                    Some((parent_at, parent_entity)) => {
                        Some((parent.as_str(), parent_at.as_str(), *parent_entity))
                    }
                    None => {
                        errors.push(format!(
                            "{current_at}: entity {current_name:?} extends unknown {parent:?}"
                        ));
                        None
                    }
                },
                None => None,
            };
        }
        shapes.insert(name.clone(), Shape { fields });
    }
    Shapes::new(shapes)
}

fn compile_field(raw: &RawField, entities: &HashMap<String, (String, &RawEntity)>) -> Result<Field, String> {
    let table = match raw {
        RawField::Name(name) => {
            return Ok(Field {
                name: name.clone(),
                source: Source::Same,
                optional: false,
                entity: None,
            })
        }
        RawField::Table(table) => table,
    };
    let with = match &table.with {
        Some(name) => Some(
            FieldConverter::parse(name)
                .ok_or_else(|| format!("field {:?}: unknown converter {name:?}", table.name))?,
        ),
        None => None,
    };
    let source = match (&table.value, &table.from) {
        _ if table.always_null => Source::Const(serde_json::Value::Null),
        (Some(_), Some(_)) => {
            return Err(format!(
                "field {:?}: give `value` or `from`, not both",
                table.name
            ))
        }
        (Some(value), None) => Source::Const(
            serde_json::to_value(value).map_err(|error| format!("field {:?}: {error}", table.name))?,
        ),
        (None, Some(from)) => Source::From(from.clone(), with),
        (None, None) if with.is_some() => Source::From(table.name.clone(), with),
        (None, None) => Source::Same,
    };
    if let Some(entity) = &table.entity {
        if !entities.contains_key(entity) {
            return Err(format!("field {:?}: unknown entity {entity:?}", table.name));
        }
    }
    Ok(Field {
        name: table.name.clone(),
        source,
        optional: table.optional,
        entity: table.entity.clone(),
    })
}

fn compile_conversion(raw: &RawConversion) -> Result<Conversion, String> {
    let with = match &raw.with {
        Some(name) => Some(Converter::parse(name).ok_or_else(|| format!("unknown converter {name:?}"))?),
        None => None,
    };
    Ok(Conversion {
        from: raw.from.clone(),
        to: raw.to.clone(),
        with,
        unless: raw.unless.clone(),
    })
}

fn renames(map: &BTreeMap<String, String>) -> impl Iterator<Item = Conversion> + '_ {
    map.iter().map(|(from, to)| Conversion {
        from: from.clone(),
        to: to.clone(),
        with: None,
        unless: None,
    })
}

fn compile_rule(
    raw: &RawRule,
    release: Option<&str>,
    at: &str,
    shapes: &Shapes,
    param_sets: &HashMap<String, (String, &RawParamSet)>,
) -> Result<Rule, String> {
    let v3 = Route::parse(&raw.v3).map_err(|message| format!("v3: {message}"))?;
    let v4 = match &raw.v4 {
        Some(text) => Route::parse(text).map_err(|message| format!("v4: {message}"))?,
        None => v3.clone(),
    };
    let since = raw
        .since
        .clone()
        .or_else(|| release.map(str::to_owned))
        .ok_or("no `since` and the file has no `release`")?;

    let mut ids = Vec::new();
    for (param, kind) in &raw.ids {
        if !v3.params().any(|name| name == param) {
            return Err(format!("ids: the V3 path has no parameter {param:?}"));
        }
        let kind = IdKind::parse(kind)
            .ok_or_else(|| format!("ids: unknown kind {kind:?} (issue, merge_request)"))?;
        ids.push((param.clone(), kind));
    }
    for param in v4.params() {
        let known = v3.params().any(|name| name == param)
            || ids.iter().any(|(name, _)| Rule::iid_param(name) == param)
            || raw.path_from_request.iter().any(|name| name == param);
        if !known {
            return Err(format!(
                "v4: parameter {param:?} is not in the V3 path (nor an iid from `ids`, nor in `path_from_request`)"
            ));
        }
    }
    for name in &raw.path_from_request {
        if !v4.params().any(|param| param == name) {
            return Err(format!(
                "path_from_request: the V4 path has no parameter {name:?}"
            ));
        }
    }
    let path_params = |path: &str| -> Result<(), String> {
        for segment in path.split('/') {
            if let Some(name) = segment.strip_prefix(':') {
                if !v3.params().any(|param| param == name) {
                    return Err(format!("{path:?}: the V3 path has no parameter {name:?}"));
                }
            }
        }
        Ok(())
    };
    for value in raw.add_query.values() {
        if let Some(name) = value.strip_prefix(':') {
            if !v3.params().any(|param| param == name) {
                return Err(format!("add_query: the V3 path has no parameter {name:?}"));
            }
        }
    }
    let item_fetch = match &raw.item_fetch {
        Some(fetch) => {
            path_params(&fetch.path).map_err(|message| format!("item_fetch: {message}"))?;
            let graphql = match &fetch.graphql {
                Some(name) => Some(graphql_collection(name, fetch)?),
                None => None,
            };
            Some(ItemFetch {
                path: fetch.path.clone(),
                fields: fetch.fields.clone(),
                graphql,
            })
        }
        None => None,
    };
    let embed = match &raw.embed {
        Some(embed) => {
            path_params(&embed.path).map_err(|message| format!("embed: {message}"))?;
            if let Some(entity) = &embed.entity {
                if !shapes.contains(entity) {
                    return Err(format!("embed: unknown entity {entity:?}"));
                }
            }
            Some(Embed {
                field: embed.field.clone(),
                path: embed.path.clone(),
                entity: embed.entity.clone(),
            })
        }
        None => None,
    };
    let to_json = |value: &toml::Value| serde_json::to_value(value).map_err(|error| error.to_string());
    let (prefetch, prefetch_path, prefetch_find) = match &raw.prefetch {
        RawPrefetch::None | RawPrefetch::Flag(false) => (false, None, None),
        RawPrefetch::Flag(true) => (true, None, None),
        RawPrefetch::Path(path) => {
            path_params(path).map_err(|message| format!("prefetch: {message}"))?;
            (true, Some(path.clone()), None)
        }
        RawPrefetch::Find { path, id } => {
            path_params(path).map_err(|message| format!("prefetch: {message}"))?;
            if !v3.params().any(|param| param == id) {
                return Err(format!("prefetch: the V3 path has no parameter {id:?}"));
            }
            (true, Some(path.clone()), Some(id.clone()))
        }
    };

    let mut conversions = Vec::new();
    for set_name in &raw.params {
        let (_, set) = param_sets
            .get(set_name)
            .ok_or_else(|| format!("params: unknown set {set_name:?}"))?;
        conversions.extend(renames(&set.rename));
        for conversion in &set.convert {
            conversions.push(compile_conversion(conversion)?);
        }
    }
    conversions.extend(renames(&raw.rename));
    for conversion in &raw.convert {
        conversions.push(compile_conversion(conversion)?);
    }

    let mut status = Vec::new();
    for (from, to) in &raw.status {
        let from: u16 = from
            .parse()
            .ok()
            .filter(|code| (100..600).contains(code))
            .ok_or_else(|| format!("status: {from:?} is not a status code"))?;
        if !(100..600).contains(to) {
            return Err(format!("status: {to} is not a status code"));
        }
        status.push((from, *to));
    }
    if let Some(entity) = &raw.response {
        if !shapes.contains(entity) {
            return Err(format!("response: unknown entity {entity:?}"));
        }
    }
    if let Some(unseen) = &raw.unseen {
        if raw.ids.is_empty() {
            return Err("unseen: only for a rule with `ids`".to_owned());
        }
        if !(400..500).contains(&unseen.status) {
            return Err(format!("unseen: {} is not a 4xx status", unseen.status));
        }
    }
    for (index, name) in raw.requires.iter().enumerate() {
        super::rule::check_name(name).map_err(|message| format!("requires: {message}"))?;
        if raw.requires[..index].contains(name) {
            return Err(format!("requires: {name:?} is listed twice"));
        }
        // `requires` is checked on the converted parameters: a name the rule renames away is never there.
        let renamed_away = conversions.iter().any(|conversion| {
            conversion.from != conversion.to
                && conversion.from.strip_suffix("[]").unwrap_or(&conversion.from) == name
        });
        if renamed_away {
            return Err(format!(
                "requires: {name:?} is renamed by the rule and would be missing from every request"
            ));
        }
    }
    for param in raw.response_when.keys() {
        super::rule::check_name(param).map_err(|message| format!("response_when: {message}"))?;
    }
    for entity in raw.response_when.values() {
        if !shapes.contains(entity) {
            return Err(format!("response_when: unknown entity {entity:?}"));
        }
    }
    if let Some(entity) = &raw.response_anonymous {
        if !shapes.contains(entity) {
            return Err(format!("response_anonymous: unknown entity {entity:?}"));
        }
    }
    let collect_all_pages = match raw.collect.as_deref() {
        None => false,
        Some("all_pages") => true,
        Some(other) => return Err(format!("collect: {other:?} is not all_pages")),
    };
    let page_base = raw.page_base.unwrap_or(1);
    if page_base > 1 {
        return Err("page_base: must be 0 or 1".to_owned());
    }
    let procedure = match &raw.procedure {
        Some(name) => Some(Procedure::parse(name).ok_or_else(|| format!("procedure: unknown {name:?}"))?),
        None => None,
    };
    if let Some(path) = &raw.refetch {
        if !path.starts_with('/') {
            return Err(format!("refetch: {path:?} is not a path"));
        }
        for segment in path.split('/') {
            if let Some(name) = segment.strip_prefix(':') {
                if !v4.params().any(|param| param == name) {
                    return Err(format!(
                        "refetch: {path:?}: the V4 path has no parameter {name:?}"
                    ));
                }
            }
        }
        if prefetch || raw.answer.is_some() || procedure.is_some() || collect_all_pages {
            return Err("refetch: not with prefetch, answer, procedure or collect".to_owned());
        }
    }
    Ok(Rule {
        v3,
        v4,
        since,
        section: raw.section.clone(),
        origin: at.to_owned(),
        conversions,
        add_query: raw
            .add_query
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        add_body: raw
            .add_body
            .iter()
            .map(|(k, v)| Ok((k.clone(), to_json(v)?)))
            .collect::<Result<_, String>>()?,
        drop_if: raw.drop_if.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        values: raw.values.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        path_from_request: raw.path_from_request.clone(),
        ids,
        status,
        response: raw.response.clone(),
        response_when: raw
            .response_when
            .iter()
            .map(|(param, entity)| (param.clone(), entity.clone()))
            .collect(),
        response_anonymous: raw.response_anonymous.clone(),
        requires: raw.requires.clone(),
        unseen: raw
            .unseen
            .as_ref()
            .map(|unseen| (unseen.status, unseen.message.clone())),
        collect_all_pages,
        page_base,
        prefetch,
        prefetch_path,
        prefetch_find,
        answer: raw.answer.as_ref().map(to_json).transpose()?,
        item_fetch,
        embed,
        procedure,
        refetch: raw.refetch.clone(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn compile_one(text: &str) -> Result<(Vec<Rule>, Shapes), LoadError> {
        compile(&[("t.toml".to_owned(), text.to_owned())])
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let text =
            "release = \"9.0\"\n\n[[rule]]\nv3 = \"GET /a/:id\"\nv4 = \"GET /b/:other\"\nsection = \"1\"\n";
        let error = compile_one(text).unwrap_err().to_string();
        assert!(error.starts_with("t.toml:3: v4: parameter \"other\""), "{error}");
    }

    #[test]
    fn unknown_keys_are_refused_with_their_line() {
        let error = compile_one("[[rule]]\nv3 = \"GET /a\"\nsection = \"1\"\nsince = \"9.0\"\nbogus = 1\n")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("t.toml:"), "{error}");
        assert!(error.contains("bogus"), "{error}");
    }

    #[test]
    fn unknown_names_are_refused() {
        let base = "release = \"9.0\"\n[[rule]]\nv3 = \"GET /a/:id\"\nsection = \"1\"\n";
        for (extra, expected) in [
            ("response = \"nope\"", "unknown entity"),
            ("procedure = \"nope\"", "unknown \"nope\""),
            ("params = [\"nope\"]", "unknown set"),
            ("ids = { other = \"issue\" }", "no parameter"),
            ("ids = { id = \"epic\" }", "unknown kind"),
            (
                "convert = [{ from = \"a\", to = \"b\", with = \"nope\" }]",
                "unknown converter",
            ),
            ("status = { \"99\" = 200 }", "not a status code"),
            (
                "response_when = { simple = \"nope\" }",
                "response_when: unknown entity",
            ),
            (
                "response_anonymous = \"nope\"",
                "response_anonymous: unknown entity",
            ),
            (
                "unseen = { status = 403, message = \"403 Forbidden\" }",
                "unseen: only for a rule with `ids`",
            ),
            (
                "ids = { id = \"issue\" }\nunseen = { status = 200, message = \"x\" }",
                "not a 4xx status",
            ),
            (
                "item_fetch = { path = \"/p/{project_id}/issues/{iid}\", fields = [\"subscribed\"], graphql = \"epics\" }",
                "graphql must be",
            ),
            (
                "item_fetch = { path = \"/p/{project_id}/issues/{iid}\", graphql = \"issues\" }",
                "list them in `fields`",
            ),
            (
                "item_fetch = { path = \"/p/{project_id}/issues/{iid}\", fields = [\"labels\"], graphql = \"issues\" }",
                "cannot complete the field \"labels\"",
            ),
            (
                "item_fetch = { path = \"/p/:id/issues/{id}\", fields = [\"subscribed\"], graphql = \"issues\" }",
                "{project_id} and {iid}",
            ),
            ("requires = [\"a b\"]", "requires: parameter name"),
            ("requires = [\"body\", \"body\"]", "listed twice"),
            (
                "rename = { title = \"name\" }\nrequires = [\"title\"]",
                "requires: \"title\" is renamed",
            ),
            (
                "response_when = { \"sim ple\" = \"project\" }",
                "response_when: parameter name",
            ),
        ] {
            let error = compile_one(&format!("{base}{extra}\n")).unwrap_err().to_string();
            assert!(error.contains(expected), "{extra}: {error}");
        }
    }

    #[test]
    fn refetch_names_v4_parameters_and_stands_alone() {
        let base = "release = \"9.0\"\n[[rule]]\nv3 = \"POST /things/:thing_id/act\"\nv4 = \"POST /things/:thing_iid/act\"\nsection = \"1\"\nids = { thing_id = \"issue\" }\n";
        let (rules, _) = compile_one(&format!("{base}refetch = \"/things/:thing_iid\"\n")).unwrap();
        assert_eq!(rules[0].refetch.as_deref(), Some("/things/:thing_iid"));
        assert!(rules[0].rebuilds_answer());
        for (extra, expected) in [
            ("refetch = \"/things/:other\"", "no parameter \"other\""),
            ("refetch = \"things\"", "not a path"),
            (
                "refetch = \"/things/:thing_iid\"\nprefetch = true",
                "not with prefetch",
            ),
        ] {
            let error = compile_one(&format!("{base}{extra}\n")).unwrap_err().to_string();
            assert!(error.contains(expected), "{extra}: {error}");
        }
    }

    #[test]
    fn shapes_extend_their_parent_and_param_sets_are_shared() {
        let text = r#"
release = "9.0"
[entity.base]
fields = ["id"]
[entity.child]
extends = "base"
fields = [{ name = "level", from = "visibility", with = "visibility_level" }]
[params.common]
rename = { a = "b" }
[[rule]]
v3 = "PUT /things/:id"
section = "2.1"
params = ["common"]
rename = { c = "d" }
response = "child"
"#;
        let (rules, shapes) = compile_one(text).unwrap();
        assert_eq!(rules[0].conversions.len(), 2);
        let v3 = shapes.apply(
            "child",
            serde_json::json!({"id": 1, "visibility": "public"}),
            crate::rewrite::shape::ShapeMode::Strict,
        );
        assert_eq!(v3, serde_json::json!({"id": 1, "level": 20}));
    }
}
