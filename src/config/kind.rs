//! The kinds of option: how each is written, what it is checked into, and the errors that name it.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::{invalid, ConfigError, Written};
pub(super) use super::{Edition, LogFormat, ShapeMode};

/// One kind of option.
pub(super) trait Kind {
    /// Its type in `RawConfig` (what `raw_type!` names).
    type Raw;
    /// The type of a default as the declaration writes it.
    type Default: std::fmt::Display;
    /// What the check turns it into.
    type Value;
    /// How it is written in TOML and the environment.
    const WRITTEN: Written;
    /// The declared default as a raw value.
    fn raw_default(default: Self::Default) -> Self::Raw;
    /// Checks a value of `option`, naming the option in the error.
    fn check(option: &'static str, raw: Self::Raw) -> Result<Self::Value, ConfigError>;
}

/// Free text.
pub(super) struct Text;
impl Kind for Text {
    type Raw = String;
    type Default = &'static str;
    type Value = String;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(_: &'static str, raw: String) -> Result<String, ConfigError> {
        Ok(raw)
    }
}

/// A file or directory.
pub(super) struct Path;
impl Kind for Path {
    type Raw = PathBuf;
    type Default = &'static str;
    type Value = PathBuf;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> PathBuf {
        PathBuf::from(default)
    }
    fn check(_: &'static str, raw: PathBuf) -> Result<PathBuf, ConfigError> {
        Ok(raw)
    }
}

/// `true` or `false`.
pub(super) struct Flag;
impl Kind for Flag {
    type Raw = bool;
    type Default = bool;
    type Value = bool;
    const WRITTEN: Written = Written::Flag;
    fn raw_default(default: bool) -> bool {
        default
    }
    fn check(_: &'static str, raw: bool) -> Result<bool, ConfigError> {
        Ok(raw)
    }
}

/// A count or size greater than 0.
pub(super) struct Count;
impl Kind for Count {
    type Raw = u64;
    type Default = u64;
    type Value = usize;
    const WRITTEN: Written = Written::Number;
    fn raw_default(default: u64) -> u64 {
        default
    }
    fn check(option: &'static str, raw: u64) -> Result<usize, ConfigError> {
        if raw == 0 {
            return Err(invalid(option, "must be greater than 0"));
        }
        usize::try_from(raw).map_err(|_| invalid(option, "is too large"))
    }
}

/// A count greater than 0 that fits 32 bits.
pub(super) struct Count32;
impl Kind for Count32 {
    type Raw = u64;
    type Default = u64;
    type Value = u32;
    const WRITTEN: Written = Written::Number;
    fn raw_default(default: u64) -> u64 {
        default
    }
    fn check(option: &'static str, raw: u64) -> Result<u32, ConfigError> {
        u32::try_from(Count::check(option, raw)?).map_err(|_| invalid(option, "is too large"))
    }
}

/// A rate per second that fits 32 bits; 0 means no limit.
pub(super) struct Rate;
impl Kind for Rate {
    type Raw = u64;
    type Default = u64;
    type Value = Option<u32>;
    const WRITTEN: Written = Written::Number;
    fn raw_default(default: u64) -> u64 {
        default
    }
    fn check(option: &'static str, raw: u64) -> Result<Option<u32>, ConfigError> {
        match raw {
            0 => Ok(None),
            rate => Ok(Some(
                u32::try_from(rate).map_err(|_| invalid(option, "is too large"))?,
            )),
        }
    }
}

/// A duration like `30s` or `500ms`, `0s` included: only for options whose description says what `0s` means.
pub(super) struct Duration;
impl Kind for Duration {
    type Raw = String;
    type Default = &'static str;
    type Value = std::time::Duration;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<std::time::Duration, ConfigError> {
        humantime::parse_duration(&raw)
            .map_err(|_| invalid(option, &format!("{raw:?} is not a duration like 30s or 500ms")))
    }
}

/// A duration longer than 0s: a wait, a lifetime or an interval for which no time at all would make every
/// request fail (`backend_timeout = "0s"` would answer every call 504) or a loop spin.
pub(super) struct NonzeroDuration;
impl Kind for NonzeroDuration {
    type Raw = String;
    type Default = &'static str;
    type Value = std::time::Duration;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<std::time::Duration, ConfigError> {
        let parsed = Duration::check(option, raw)?;
        if parsed.is_zero() {
            return Err(invalid(option, "must be longer than 0s"));
        }
        Ok(parsed)
    }
}

/// A socket address like `127.0.0.1:8080`.
pub(super) struct Address;
impl Kind for Address {
    type Raw = String;
    type Default = &'static str;
    type Value = SocketAddr;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<SocketAddr, ConfigError> {
        raw.parse()
            .map_err(|_| invalid(option, &format!("{raw:?} is not an address like 127.0.0.1:8080")))
    }
}

/// An `http://` or `https://` URL with a host; a trailing slash is dropped.
pub(super) struct HttpUrl;
impl Kind for HttpUrl {
    type Raw = String;
    type Default = &'static str;
    type Value = http::Uri;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<http::Uri, ConfigError> {
        let uri: http::Uri = raw
            .trim_end_matches('/')
            .parse()
            .map_err(|_| invalid(option, &format!("{raw:?} is not a URL")))?;
        match uri.scheme_str() {
            Some("http") | Some("https") if uri.authority().is_some() => Ok(uri),
            _ => Err(invalid(
                option,
                &format!("{raw:?} must be an http:// or https:// URL with a host"),
            )),
        }
    }
}

/// A base URL shown to users: `http://` or `https://`, kept as written less a trailing slash.
pub(super) struct BaseUrl;
impl Kind for BaseUrl {
    type Raw = String;
    type Default = &'static str;
    type Value = String;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<String, ConfigError> {
        if !(raw.starts_with("http://") || raw.starts_with("https://")) {
            return Err(invalid(option, "must start with http:// or https://"));
        }
        Ok(raw.trim_end_matches('/').to_owned())
    }
}

/// The server's brand word, as [`crate::util::identifier::check`] allows it.
pub(super) struct Word;
impl Kind for Word {
    type Raw = String;
    type Default = &'static str;
    type Value = String;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<String, ConfigError> {
        crate::util::identifier::check(&raw).map_err(|error| invalid(option, &error.to_string()))?;
        Ok(raw)
    }
}

/// 64 hexadecimal digits: a 32-byte key.
pub(super) struct Key;
impl Kind for Key {
    type Raw = String;
    type Default = &'static str;
    type Value = [u8; 32];
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<[u8; 32], ConfigError> {
        let text = raw.trim();
        let bad = || invalid(option, "must be 64 hexadecimal digits (32 bytes)");
        if text.len() != 64 {
            return Err(bad());
        }
        let mut key = [0u8; 32];
        for (index, byte) in key.iter_mut().enumerate() {
            let pair = text.get(index * 2..index * 2 + 2).ok_or_else(bad)?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(key)
    }
}

/// IP addresses and CIDR ranges separated by commas or spaces; a bare address is a range of one.
pub(super) struct ProxyList;
impl Kind for ProxyList {
    type Raw = String;
    type Default = &'static str;
    type Value = Vec<ipnet::IpNet>;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<Vec<ipnet::IpNet>, ConfigError> {
        raw.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|item| !item.is_empty())
            .map(|item| {
                item.parse::<ipnet::IpNet>()
                    .or_else(|_| item.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .map_err(|_| {
                        invalid(
                            option,
                            &format!("{item:?} is not an IP address or a CIDR range like 10.0.0.0/8"),
                        )
                    })
            })
            .collect()
    }
}

/// One of a few words, each naming a variant.
trait Choice: Copy + 'static {
    /// The words and their variants, in the order the error lists them.
    const CHOICES: &'static [(&'static str, Self)];
}

impl<T: Choice> Kind for T {
    type Raw = String;
    type Default = &'static str;
    type Value = T;
    const WRITTEN: Written = Written::Text;
    fn raw_default(default: &'static str) -> String {
        default.to_owned()
    }
    fn check(option: &'static str, raw: String) -> Result<T, ConfigError> {
        T::CHOICES
            .iter()
            .find(|(word, _)| *word == raw)
            .map(|(_, value)| *value)
            .ok_or_else(|| {
                let words: Vec<&str> = T::CHOICES.iter().map(|(word, _)| *word).collect();
                invalid(option, &format!("{raw:?} is not {}", words.join(" or ")))
            })
    }
}

impl Choice for LogFormat {
    const CHOICES: &'static [(&'static str, Self)] = &[("text", Self::Text), ("json", Self::Json)];
}

impl Choice for ShapeMode {
    const CHOICES: &'static [(&'static str, Self)] =
        &[("strict", Self::Strict), ("tolerant", Self::Tolerant)];
}

impl Choice for Edition {
    const CHOICES: &'static [(&'static str, Self)] = &[("free", Self::Free), ("premium", Self::Premium)];
}
