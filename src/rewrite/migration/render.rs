//! The migration report's renderers: [`markdown`] (one client, to paste into an issue), [`csv`] (one line per
//! client and route) and JSON (the types serialize), and [`select`]ing the clients `svcgate v3 report` asks for.

use super::advice::RouteAdvice;
use super::ClientReport;

/// The output formats of `svcgate v3 report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Each client's Markdown, one after another.
    Markdown,
    /// `{"clients": [...]}`, each client's full report.
    Json,
    /// One line per client and route.
    Csv,
}

/// Why a report cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// No client has this id or user.
    #[error("no V3 client {0:?} in the usage counts: give a client id or a user (the JSON or CSV report lists them)")]
    UnknownClient(String),
    /// The CSV could not be written.
    #[error("writing the CSV: {0}")]
    Csv(#[from] csv::Error),
    /// The JSON could not be written.
    #[error("writing the JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The clients `wanted` names (its id, or every client of that user), or all of them without `wanted`.
pub fn select(clients: Vec<ClientReport>, wanted: Option<&str>) -> Result<Vec<ClientReport>, ReportError> {
    let Some(wanted) = wanted else {
        return Ok(clients);
    };
    let chosen: Vec<ClientReport> = clients
        .into_iter()
        .filter(|client| client.is_named(wanted))
        .collect();
    if chosen.is_empty() {
        return Err(ReportError::UnknownClient(wanted.to_owned()));
    }
    Ok(chosen)
}

/// The reports in `format`.
pub fn render(clients: &[ClientReport], format: Format) -> Result<String, ReportError> {
    match format {
        Format::Markdown => Ok(clients.iter().map(markdown).collect::<Vec<_>>().join("\n")),
        Format::Json => Ok(serde_json::to_string_pretty(
            &serde_json::json!({ "clients": clients }),
        )?),
        Format::Csv => Ok(csv(clients)?),
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Caller-provided text (a user, a product or versions from the `User-Agent`) for Markdown prose, headings and
/// cells: every character Markdown or an issue tracker could read as markup (links, images, emphasis, HTML and
/// comments, mentions, headings, table cells) is backslash-escaped, and line breaks become spaces.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '<' | '>' | '!' | '#' | '@' | '|' | '~' => {
                out.push('\\');
                out.push(character);
            }
            '\n' | '\r' => out.push(' '),
            other if other.is_control() => out.push(' '),
            other => out.push(other),
        }
    }
    out
}

/// Text that may hold caller-provided parts (a route without a rule keeps the path's words) as a code span:
/// backticks removed so it cannot end early, line breaks as spaces, `|` escaped for table cells.
fn code(text: &str) -> String {
    format!("`{}`", cell(&text.replace('`', "").replace('\r', " ")))
}

/// One client's report as Markdown, to paste into an issue: a heading, a table of routes, then each route's change.
pub fn markdown(client: &ClientReport) -> String {
    let mut out = String::new();
    let facts = &client.facts;
    let versions = if facts.versions.is_empty() {
        String::new()
    } else {
        format!(" (versions {})", escape_text(&facts.versions.join(", ")))
    };
    out.push_str(&format!(
        "## V3 migration: {} — {}{versions}\n\n",
        escape_text(&facts.user),
        escape_text(&facts.product)
    ));
    out.push_str(&format!(
        "Client `{}`: {} ({}) from {} to {}{}. Every route below must move to V4 before V3 is switched off.\n\n",
        facts.id,
        plural(facts.calls, "V3 call", "V3 calls"),
        plural(facts.errors, "error", "errors"),
        facts.first_call,
        facts.last_call,
        if facts.retired { "; retired (no recent call)" } else { "" }
    ));
    out.push_str("| V3 route | Calls | Errors | First call | Last call | V4 request |\n");
    out.push_str("|---|---:|---:|---|---|---|\n");
    for route in &client.routes {
        let v4 = match (&route.advice.v4_method, &route.advice.v4_path) {
            (Some(method), Some(path)) => code(&format!("{method} {path}")),
            _ => "—".to_owned(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {v4} |\n",
            code(&route.route),
            route.calls,
            route.errors,
            route.first_call,
            route.last_call,
        ));
    }
    for route in &client.routes {
        out.push_str(&format!("\n### {}\n\n", code(&route.route)));
        out.push_str(&advice_markdown(&route.advice));
    }
    out
}

fn advice_markdown(advice: &RouteAdvice) -> String {
    let mut out = format!("{}.\n", advice.summary);
    if let (Some(since), Some(section)) = (&advice.since, &advice.section) {
        out.push_str(&format!(
            "\nChanged in {since} (translation reference §{section}).\n"
        ));
    }
    let mut bullets = advice.changes();
    if let Some(example) = &advice.example {
        let calls = if example.v4.is_empty() {
            "the steps under Instead".to_owned()
        } else {
            example
                .v4
                .iter()
                .map(|call| format!("`{call}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        bullets.push(format!("Example: `{}` → {calls}", example.v3));
    }
    if !bullets.is_empty() {
        out.push('\n');
        for bullet in bullets {
            out.push_str(&format!("- {}\n", cell(&bullet)));
        }
    }
    out
}

/// The reports as CSV, one line per client and route.
pub fn csv(clients: &[ClientReport]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "client_id",
        "user",
        "product",
        "versions",
        "retired",
        "route",
        "calls",
        "errors",
        "first_call",
        "last_call",
        "change",
        "v4_request",
        "request_changes",
        "answer_changes",
    ])?;
    for client in clients {
        for route in &client.routes {
            let advice = &route.advice;
            let v4 = match (&advice.v4_method, &advice.v4_path) {
                (Some(method), Some(path)) => format!("{method} {path}"),
                _ => String::new(),
            };
            let mut request = advice.request.clone();
            request.extend(advice.instead.iter().map(|text| format!("instead: {text}")));
            let answer = &advice.answer;
            let answer_text: Vec<String> = answer
                .fields_renamed
                .iter()
                .map(|rename| format!("{} is {}", rename.v3, rename.v4))
                .chain(answer.fields_removed.iter().map(|field| format!("no {field}")))
                .chain(
                    answer
                        .status
                        .iter()
                        .map(|status| format!("{} for {}", status.v4, status.v3)),
                )
                .chain(answer.pagination.iter().cloned())
                .chain(answer.notes.iter().cloned())
                .collect();
            let change = serde_json::to_value(advice.change)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_default();
            writer.write_record([
                client.facts.id.as_str(),
                client.facts.user.as_str(),
                client.facts.product.as_str(),
                &client.facts.versions.join(" "),
                if client.facts.retired { "yes" } else { "no" },
                route.route.as_str(),
                &route.calls.to_string(),
                &route.errors.to_string(),
                route.first_call.as_str(),
                route.last_call.as_str(),
                &change,
                &v4,
                &request.join("; "),
                &answer_text.join("; "),
            ])?;
        }
    }
    let bytes = writer.into_inner().map_err(|error| error.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
