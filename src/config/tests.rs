//! The configuration's tests: every layer, every kind of option, the relations between options, and the errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn file_then_environment_then_flags_in_rising_precedence() {
    let file = RawConfig::from_toml(
        "listen = \"127.0.0.1:1\"\nbackend = \"http://file\"\ndata_dir = \"/d\"\nlog_format = \"json\"",
        "t.toml",
    )
    .unwrap();
    let environment = RawConfig::from_env(env(&[
        ("SVCGATE_LISTEN", "127.0.0.1:2"),
        ("SVCGATE_BACKEND", "http://env"),
        ("PATH", "/bin"),
    ]))
    .unwrap();
    let flags = RawConfig {
        listen: Some("127.0.0.1:3".to_owned()),
        ..RawConfig::default()
    };
    let config = Config::from_raw(file.overlay(environment).overlay(flags)).unwrap();
    assert_eq!(config.server.listen.port(), 3);
    assert_eq!(config.backend.url.unwrap().host(), Some("env"));
    assert_eq!(config.log.format, LogFormat::Json);
}

#[test]
fn unknown_file_option_is_named_in_one_line() {
    let error = RawConfig::from_toml("lisen = \"x\"", "gate.toml")
        .unwrap_err()
        .to_string();
    assert!(error.contains("gate.toml"), "{error}");
    assert!(error.contains("lisen"), "{error}");
    assert!(!error.contains('\n'), "{error}");
}

#[test]
fn a_removed_option_says_it_was_removed_and_what_replaced_it() {
    let error = RawConfig::from_toml("alert_max_concurrent_per_integration = 16", "gate.toml")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("it was removed") && error.contains("alert_integration_budget_bytes"),
        "{error}"
    );
    assert!(!error.contains("did you mean"), "{error}");
    let error = RawConfig::from_env(env(&[("SVCGATE_ALERT_MAX_CONCURRENT_PER_INTEGRATION", "16")]))
        .unwrap_err()
        .to_string();
    assert!(error.contains("it was removed"), "{error}");
}

#[test]
fn unknown_environment_option_is_named() {
    let error = RawConfig::from_env(env(&[("SVCGATE_LISTN", "x")]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "environment variable SVCGATE_LISTN names no svcgate option; did you mean SVCGATE_LISTEN?"
    );
    let error = RawConfig::from_env(env(&[("SVCGATE_QQQ", "x")]))
        .unwrap_err()
        .to_string();
    assert_eq!(error, "environment variable SVCGATE_QQQ names no svcgate option");
}

#[test]
fn bad_values_name_their_option() {
    let cases = [
        ("listen = \"nowhere\"", "listen"),
        ("backend = \"ftp://x\"", "backend"),
        ("backend_timeout = \"soon\"", "backend_timeout"),
        ("response_shapes = \"loose\"", "response_shapes"),
        ("max_collected_items = 0", "max_collected_items"),
        ("upgrade_idle_timeout = \"0s\"", "upgrade_idle_timeout"),
        ("upgrade_idle_timeout = \"forever\"", "upgrade_idle_timeout"),
        ("tls_cert = \"/c.pem\"", "tls_key"),
    ];
    for (text, option) in cases {
        let raw = RawConfig::from_toml(&format!("dev = true\n{text}"), "t.toml").unwrap();
        let error = Config::from_raw(raw).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("option `{option}`")),
            "{text}: {error}"
        );
    }
}

#[test]
fn oauth_sign_in_needs_both_the_client_id_and_its_secret_and_never_shows_the_secret() {
    let raw = |id: Option<&str>, secret: Option<&str>| RawConfig {
        backend: Some("http://backend".to_owned()),
        data_dir: Some("/tmp/x".into()),
        oauth_client_id: id.map(str::to_owned),
        oauth_client_secret: secret.map(str::to_owned),
        ..RawConfig::default()
    };
    let config = Config::from_raw(raw(Some("app"), Some("s3cret"))).unwrap();
    let oauth = config.pages.oauth.clone().unwrap();
    assert_eq!(
        (oauth.client_id.as_str(), oauth.scopes.as_str()),
        ("app", "read_api")
    );
    assert_eq!(config.pages.sign_in.refresh_margin, Duration::from_secs(60));
    assert!(!format!("{config:?}").contains("s3cret"));
    assert!(Config::from_raw(raw(None, None)).unwrap().pages.oauth.is_none());
    let error = Config::from_raw(raw(Some("app"), None)).unwrap_err();
    assert!(error.to_string().contains("oauth_client_secret"), "{error}");
    let error = Config::from_raw(raw(None, Some("s3cret"))).unwrap_err();
    assert!(error.to_string().contains("oauth_client_id"), "{error}");
}

#[test]
fn trusted_proxies_take_addresses_and_ranges_and_name_a_bad_one() {
    let raw = RawConfig::from_toml(
        "dev = true\ntrusted_proxies = \"10.0.0.0/8, 192.168.1.7 ::1\"",
        "t.toml",
    )
    .unwrap();
    let proxies = Config::from_raw(raw).unwrap().server.trusted_proxies;
    let covers = |address: &str| {
        proxies
            .iter()
            .any(|net| net.contains(&address.parse::<std::net::IpAddr>().unwrap()))
    };
    assert!(covers("10.20.30.40") && covers("192.168.1.7") && covers("::1"));
    assert!(!covers("192.168.1.8") && !covers("11.0.0.1"));
    let raw = RawConfig::from_toml("dev = true\ntrusted_proxies = \"10.0.0.0/33\"", "t.toml").unwrap();
    let error = Config::from_raw(raw).unwrap_err().to_string();
    assert!(
        error.starts_with("option `trusted_proxies`") && error.contains("10.0.0.0/33"),
        "{error}"
    );
    let none = Config::from_raw(RawConfig::from_toml("dev = true", "t.toml").unwrap()).unwrap();
    assert!(none.server.trusted_proxies.is_empty());
}

#[test]
fn finished_incident_calls_are_kept_at_least_as_long_as_a_claim() {
    let error = Config::from_raw(RawConfig {
        backend: Some("http://127.0.0.1:9".to_owned()),
        outbox_lease: Some("2m".to_owned()),
        outbox_keep_done: Some("1m".to_owned()),
        ..RawConfig::default()
    })
    .unwrap_err()
    .to_string();
    assert!(error.contains("outbox_keep_done"), "{error}");
}

#[test]
fn an_integrations_share_of_alert_payloads_holds_at_least_the_largest_payload() {
    let raw = |share: u64| RawConfig {
        backend: Some("http://127.0.0.1:9".to_owned()),
        alert_max_body_bytes: Some(1 << 20),
        alert_integration_budget_bytes: Some(share),
        data_dir: Some("/var/lib/svcgate".into()),
        ..RawConfig::default()
    };
    let error = Config::from_raw(raw((1 << 20) - 1)).unwrap_err().to_string();
    assert!(
        error.contains("alert_integration_budget_bytes") && error.contains("alert_max_body_bytes"),
        "{error}"
    );
    let config = Config::from_raw(raw(1 << 20)).unwrap();
    assert_eq!(config.alerts.integration_budget_bytes, 1 << 20);
    assert_eq!(config.alerts.body_stall_timeout, Duration::from_secs(2));
}

#[test]
fn secret_key_file_is_read_checked_and_exclusive_with_secret_key() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("key");
    std::fs::write(&path, format!("{}\n", "ab".repeat(32))).unwrap();
    let raw = |file: &std::path::Path, key: Option<String>| RawConfig {
        backend: Some("http://backend".to_owned()),
        database_url: Some("postgres://svcgate@db/svcgate".to_owned()),
        secret_key_file: Some(file.to_path_buf()),
        secret_key: key,
        ..RawConfig::default()
    };
    let config = Config::from_raw(raw(&path, None)).unwrap();
    assert_eq!(config.alerts.secret_key, Some([0xab; 32]));
    let error = Config::from_raw(raw(&path, Some("cd".repeat(32))))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("option `secret_key_file`") && error.contains("not both"),
        "{error}"
    );
    std::fs::write(&path, "not a key").unwrap();
    let error = Config::from_raw(raw(&path, None)).unwrap_err().to_string();
    assert!(
        error.contains("64 hexadecimal digits") && !error.contains("not a key"),
        "{error}"
    );
    let error = Config::from_raw(raw(&directory.path().join("missing"), None))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("option `secret_key_file`") && error.contains("missing"),
        "{error}"
    );
}

#[test]
fn postgresql_needs_a_postgres_url_and_a_shared_secret_key() {
    let raw = |database_url: &str, secret_key: Option<&str>| RawConfig {
        backend: Some("http://backend".to_owned()),
        database_url: Some(database_url.to_owned()),
        secret_key: secret_key.map(str::to_owned),
        ..RawConfig::default()
    };
    let key = "00".repeat(32);
    let config = Config::from_raw(raw("postgres://svcgate@db/svcgate", Some(&key))).unwrap();
    assert_eq!(config.store.database.map(|database| database.pool_size), Some(16));
    let error = Config::from_raw(raw("postgres://svcgate@db/svcgate", None)).unwrap_err();
    assert!(error.to_string().contains("secret_key"), "{error}");
    let error = Config::from_raw(raw("mysql://db", Some(&key))).unwrap_err();
    assert!(error.to_string().contains("database_url"), "{error}");
}

#[test]
fn backend_and_data_dir_are_required_unless_dev() {
    let error = Config::from_raw(RawConfig::default()).unwrap_err().to_string();
    assert!(error.contains("`backend`"), "{error}");
    let dev = RawConfig {
        dev: Some(true),
        ..RawConfig::default()
    };
    assert!(Config::from_raw(dev).is_ok());
}

#[test]
fn environment_flags_and_numbers_are_typed() {
    let raw = RawConfig::from_env(env(&[
        ("SVCGATE_DEV", "true"),
        ("SVCGATE_MAX_COLLECTED_ITEMS", "5"),
    ]))
    .unwrap();
    let config = Config::from_raw(raw).unwrap();
    assert!(config.dev);
    assert_eq!(config.rewrite.max_collected, 5);
    let error = RawConfig::from_env(env(&[("SVCGATE_DEV", "maybe")]))
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("option `dev`"), "{error}");
}

#[test]
fn passthrough_options_default_and_parse() {
    let config = Config::from_raw(RawConfig {
        dev: Some(true),
        ..RawConfig::default()
    })
    .unwrap();
    assert!(!config.backend.preserve_host);
    assert_eq!(config.backend.upgrade_idle_timeout, Duration::from_secs(600));
    let raw = RawConfig::from_env(env(&[
        ("SVCGATE_DEV", "1"),
        ("SVCGATE_PRESERVE_HOST", "true"),
        ("SVCGATE_UPGRADE_IDLE_TIMEOUT", "90s"),
    ]))
    .unwrap();
    let config = Config::from_raw(raw).unwrap();
    assert!(config.backend.preserve_host);
    assert_eq!(config.backend.upgrade_idle_timeout, Duration::from_secs(90));
}

#[test]
fn declared_defaults_are_shown_as_written_and_apply() {
    let default = |name: &str| {
        options()
            .iter()
            .find(|option| option.name() == name)
            .and_then(OptionInfo::default)
    };
    assert_eq!(default("max_rewrite_body_bytes").as_deref(), Some("67108864"));
    assert_eq!(default("backend_timeout").as_deref(), Some("60s"));
    assert_eq!(default("dev").as_deref(), Some("false"));
    assert_eq!(default("identifier_word").as_deref(), Some("svc"));
    assert_eq!(default("backend"), None);
    let config = Config::from_raw(RawConfig {
        dev: Some(true),
        ..RawConfig::default()
    })
    .unwrap();
    assert_eq!(config.rewrite.max_body, 64 << 20);
    assert_eq!(config.backend.timeout, Duration::from_secs(60));
    assert_eq!(config.alerts.edition, Edition::Premium);
    assert_eq!(config.alerts.rate_limit, None);
    assert_eq!(config.server.listen, "127.0.0.1:8080".parse().unwrap());
    assert!(options().iter().all(|option| !option.doc().is_empty()));
}

#[test]
fn overlay_takes_every_option_the_higher_layer_sets() {
    let low = RawConfig::from_toml("alert_rate_limit = 5\nlog_level = \"warn\"", "t.toml").unwrap();
    let high = RawConfig::from_env(env(&[("SVCGATE_ALERT_RATE_LIMIT", "7")])).unwrap();
    let merged = low.overlay(high);
    assert_eq!(merged.alert_rate_limit, Some(7));
    assert_eq!(merged.log_level.as_deref(), Some("warn"));
}

#[test]
fn every_option_is_accepted_by_the_file_layer() {
    for (name, kind) in option_names() {
        let value = match kind {
            "boolean" => "true".to_owned(),
            "number" => "1".to_owned(),
            _ => "\"x\"".to_owned(),
        };
        RawConfig::from_toml(&format!("{name} = {value}"), "t.toml").unwrap();
    }
}

#[test]
fn the_default_outbox_lease_is_the_stores_and_holds_an_incident_call_at_the_default_backend_timeout() {
    let config = Config::from_raw(RawConfig {
        dev: Some(true),
        ..RawConfig::default()
    })
    .unwrap();
    assert_eq!(config.outbox.lease, crate::store::OUTBOX_LEASE);
    assert!(config.outbox.lease >= crate::alerts::outbox::lease_for(config.backend.timeout));
    // A search and a create of 60 s each take 120 s, three quarters of 160 s.
    assert_eq!(
        crate::alerts::outbox::lease_for(Duration::from_secs(60)),
        Duration::from_secs(160)
    );
}
