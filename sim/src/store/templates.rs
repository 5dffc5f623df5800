//! The fixed template catalogues served under `/templates`: licenses, `.gitignore` files, CI configuration files
//! and Dockerfiles.

/// A license template.
#[derive(Debug, Clone, Copy)]
pub struct License {
    /// Key, e.g. `mit`.
    pub key: &'static str,
    /// Full name.
    pub name: &'static str,
    /// Short name, if any.
    pub nickname: Option<&'static str>,
    /// Whether it is one of the popular licenses.
    pub featured: bool,
    /// Description page.
    pub html_url: &'static str,
    /// Canonical text.
    pub source_url: &'static str,
    /// Summary.
    pub description: &'static str,
    /// Conditions.
    pub conditions: &'static [&'static str],
    /// Permissions.
    pub permissions: &'static [&'static str],
    /// Limitations.
    pub limitations: &'static [&'static str],
    /// Text with `[year]` and `[fullname]` placeholders.
    pub content: &'static str,
}

/// Every license template.
pub const LICENSES: &[License] = &[
    License {
        key: "mit",
        name: "MIT License",
        nickname: None,
        featured: true,
        html_url: "http://choosealicense.com/licenses/mit/",
        source_url: "https://opensource.org/licenses/MIT",
        description: "A short and simple permissive license with conditions only requiring preservation of copyright and license notices.",
        conditions: &["include-copyright"],
        permissions: &["commercial-use", "modifications", "distribution", "private-use"],
        limitations: &["liability", "warranty"],
        content: "MIT License\n\nCopyright (c) [year] [fullname]\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software and associated documentation files (the \"Software\"), to deal\nin the Software without restriction.\n\nTHE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND.\n",
    },
    License {
        key: "apache-2.0",
        name: "Apache License 2.0",
        nickname: None,
        featured: true,
        html_url: "http://choosealicense.com/licenses/apache-2.0/",
        source_url: "http://www.apache.org/licenses/LICENSE-2.0.html",
        description: "A permissive license whose main conditions require preservation of copyright and license notices.",
        conditions: &["include-copyright", "document-changes"],
        permissions: &["commercial-use", "modifications", "distribution", "patent-use", "private-use"],
        limitations: &["trademark-use", "liability", "warranty"],
        content: "Copyright [year] [fullname]\n\nLicensed under the Apache License, Version 2.0 (the \"License\");\nyou may not use this file except in compliance with the License.\n",
    },
    License {
        key: "lgpl-3.0",
        name: "GNU Lesser General Public License v3.0",
        nickname: Some("GNU LGPLv3"),
        featured: false,
        html_url: "http://choosealicense.com/licenses/lgpl-3.0/",
        source_url: "http://www.gnu.org/licenses/lgpl-3.0.txt",
        description: "Permissions of this copyleft license are conditioned on making available complete source code of licensed works and modifications under the same license or the GNU GPLv3.",
        conditions: &["include-copyright", "disclose-source", "document-changes", "same-license"],
        permissions: &["commercial-use", "modifications", "distribution", "patent-use", "private-use"],
        limitations: &["liability", "warranty"],
        content: "GNU LESSER GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n\nCopyright (C) [year] [fullname]\n",
    },
];

/// `.gitignore` templates: (name, content).
pub const GITIGNORES: &[(&str, &str)] = &[
    ("Rust", "/target/\n**/*.rs.bk\n"),
    ("Ruby", "*.gem\n/.bundle/\n/vendor/bundle\n/log/*\n/tmp/*\n"),
    ("Node", "node_modules/\nnpm-debug.log*\n"),
];

/// CI configuration templates: (name, content).
pub const CI_YMLS: &[(&str, &str)] = &[
    (
        "Rust",
        "image: \"rust:latest\"\n\ntest:cargo:\n  script:\n  - rustc --version && cargo --version\n  - cargo test --all --verbose\n",
    ),
    (
        "Ruby",
        "image: \"ruby:2.4\"\n\nbefore_script:\n  - bundle install\n\nrspec:\n  script:\n  - rspec spec\n",
    ),
];

/// Dockerfile templates: (name, content).
pub const DOCKERFILES: &[(&str, &str)] = &[
    (
        "Binary",
        "FROM alpine:3.7\nCOPY app /usr/local/bin/app\nCMD [\"app\"]\n",
    ),
    (
        "Python",
        "FROM python:3.6-alpine\nWORKDIR /usr/src/app\nCOPY . .\nCMD [\"python\", \"app.py\"]\n",
    ),
];

/// The license with key `key` (case-insensitive).
pub fn license(key: &str) -> Option<&'static License> {
    LICENSES.iter().find(|l| l.key.eq_ignore_ascii_case(key))
}

/// The catalogue of a template kind (`gitignores`, `svc_ci_ymls`, `dockerfiles`), with the singular name used in
/// 404 messages.
pub fn catalogue(kind: &str) -> Option<(&'static str, &'static [(&'static str, &'static str)])> {
    match kind {
        "gitignores" => Some(("gitignore", GITIGNORES)),
        "svc_ci_ymls" => Some(("svc_ci_yml", CI_YMLS)),
        "dockerfiles" => Some(("dockerfile", DOCKERFILES)),
        _ => None,
    }
}
