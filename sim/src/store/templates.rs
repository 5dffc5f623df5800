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
        key: "bsd-2-clause",
        name: "BSD 2-Clause \"Simplified\" License",
        nickname: None,
        featured: false,
        html_url: "http://choosealicense.com/licenses/bsd-2-clause/",
        source_url: "https://opensource.org/licenses/BSD-2-Clause",
        description: "A permissive license that comes in two variants, the BSD 2-Clause and BSD 3-Clause.",
        conditions: &["include-copyright"],
        permissions: &["commercial-use", "modifications", "distribution", "private-use"],
        limitations: &["liability", "warranty"],
        content: "BSD 2-Clause License\n\nCopyright (c) [year], [fullname]\nAll rights reserved.\n\nRedistribution and use in source and binary forms, with or without\nmodification, are permitted provided that the conditions are met.\n",
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
    (
        "Android",
        "image: \"openjdk:17\"\n\ntest:\n  script:\n  - ./gradlew assembleDebug\n",
    ),
    (
        "Bash",
        "image: \"busybox:latest\"\n\ntest:\n  script:\n  - echo \"Do a test here\"\n",
    ),
    (
        "C++",
        "image: \"gcc\"\n\ntest:\n  script:\n  - g++ -o app main.cpp\n",
    ),
    (
        "Clojure",
        "image: \"clojure:lein\"\n\ntest:\n  script:\n  - lein test\n",
    ),
    (
        "Crystal",
        "image: \"crystallang/crystal:latest\"\n\ntest:\n  script:\n  - crystal spec\n",
    ),
    (
        "Dart",
        "image: \"dart:stable\"\n\ntest:\n  script:\n  - dart test\n",
    ),
    (
        "Django",
        "image: \"python:3.12\"\n\ntest:\n  script:\n  - python manage.py test\n",
    ),
    (
        "Docker",
        "image: \"docker:latest\"\n\ntest:\n  script:\n  - docker build .\n",
    ),
    (
        "Elixir",
        "image: \"elixir:latest\"\n\ntest:\n  script:\n  - mix test\n",
    ),
    (
        "Go",
        "image: \"golang:latest\"\n\ntest:\n  script:\n  - go test ./...\n",
    ),
    (
        "Gradle",
        "image: \"gradle:alpine\"\n\ntest:\n  script:\n  - gradle check\n",
    ),
    (
        "Julia",
        "image: \"julia:1.10\"\n\ntest:\n  script:\n  - julia -e 'using Pkg; Pkg.test()'\n",
    ),
    (
        "Laravel",
        "image: \"php:8.3\"\n\ntest:\n  script:\n  - vendor/bin/phpunit\n",
    ),
    (
        "Maven",
        "image: \"maven:3-openjdk-17\"\n\ntest:\n  script:\n  - mvn verify\n",
    ),
    (
        "Nodejs",
        "image: \"node:latest\"\n\ntest:\n  script:\n  - npm test\n",
    ),
    (
        "PHP",
        "image: \"php:8.3\"\n\ntest:\n  script:\n  - phpunit\n",
    ),
    (
        "Python",
        "image: \"python:latest\"\n\ntest:\n  script:\n  - python -m pytest\n",
    ),
    (
        "Scala",
        "image: \"openjdk:17\"\n\ntest:\n  script:\n  - sbt test\n",
    ),
    (
        "Swift",
        "image: \"swift:latest\"\n\ntest:\n  script:\n  - swift test\n",
    ),
    (
        "Terraform",
        "image: \"hashicorp/terraform:latest\"\n\ntest:\n  script:\n  - terraform validate\n",
    ),
];

/// Dockerfile templates: (name, content).
pub const DOCKERFILES: &[(&str, &str)] = &[
    (
        "Binary",
        "FROM alpine:3.7\nCOPY app /usr/local/bin/app\nCMD [\"app\"]\n",
    ),
    (
        "Node",
        "FROM node:20-alpine\nWORKDIR /usr/src/app\nCOPY . .\nRUN npm ci\nCMD [\"npm\", \"start\"]\n",
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

/// The catalogue of a template kind (`gitignores`, `<word>_ci_ymls`, `dockerfiles`, where `word` is the
/// identifier word), with the singular name used in 404 messages.
pub fn catalogue(kind: &str, word: &str) -> Option<(String, &'static [(&'static str, &'static str)])> {
    match kind {
        "gitignores" => Some(("gitignore".into(), GITIGNORES)),
        "dockerfiles" => Some(("dockerfile".into(), DOCKERFILES)),
        _ if kind.strip_suffix("_ci_ymls") == Some(word) => Some((format!("{word}_ci_yml"), CI_YMLS)),
        _ => None,
    }
}
