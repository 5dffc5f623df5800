//! The macros behind the `options!` table: the raw and checked types of each kind, the check, the default's
//! text, and the table itself.

/// Declares every option once: its name, its kind (how it is written and checked), its default if it has one, and
/// its description. From this list come [`RawConfig`]'s fields, [`RawConfig::overlay`], the option table the
/// environment layer and [`options`] read, and the checked-and-defaulted values [`Config::from_raw`] builds on.
macro_rules! options {
    ($( $(#[doc = $doc:literal])+ $name:ident: $kind:ident $(= $default:expr)? ),+ $(,)?) => {
        /// Every option, all optional: one layer of configuration before defaults are applied.
        #[derive(Debug, Default, Clone, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawConfig {
            $( $(#[doc = $doc])+ pub $name: Option<raw_type!($kind)>, )+
        }

        impl RawConfig {
            /// Returns this layer with every option that `higher` sets taken from `higher`.
            pub fn overlay(self, higher: RawConfig) -> RawConfig {
                RawConfig { $( $name: higher.$name.or(self.$name), )+ }
            }
        }

        /// The options in declaration order: the one list the environment layer checks names against.
        const OPTIONS: &[OptionInfo] = &[
            $(
                OptionInfo {
                    name: stringify!($name),
                    written: <kind::$kind as kind::Kind>::WRITTEN,
                    doc: concat!($($doc),+),
                    default: || default_text!($kind $(, $default)?),
                },
            )+
        ];

        /// Every option with its kind's checks passed and its default, if it has one, applied.
        struct Checked {
            $( $name: checked_type!($kind $(, $default)?), )+
        }

        impl Checked {
            /// Checks each option on its own, in declaration order; the first error is returned.
            fn from_raw(raw: RawConfig) -> Result<Self, ConfigError> {
                Ok(Checked {
                    $( $name: check_option!($name, $kind, raw.$name $(, $default)?), )+
                })
            }
        }
    };
}

/// The type an option of this kind has in [`RawConfig`]; the compiler holds it to the kind's `Raw`.
macro_rules! raw_type {
    (Flag) => {
        bool
    };
    (Count) => {
        u64
    };
    (Count32) => {
        u64
    };
    (Rate) => {
        u64
    };
    (Path) => {
        PathBuf
    };
    ($text:ident) => {
        String
    };
}

/// The checked type of an option: the kind's value, in an `Option` when the option has no default.
macro_rules! checked_type {
    ($kind:ident) => { Option<<kind::$kind as kind::Kind>::Value> };
    ($kind:ident, $default:expr) => { <kind::$kind as kind::Kind>::Value };
}

/// Checks one option's merged value, applying its default if it has one.
macro_rules! check_option {
    ($name:ident, $kind:ident, $raw:expr) => {
        match $raw {
            Some(value) => Some(<kind::$kind as kind::Kind>::check(stringify!($name), value)?),
            None => None,
        }
    };
    ($name:ident, $kind:ident, $raw:expr, $default:expr) => {
        <kind::$kind as kind::Kind>::check(
            stringify!($name),
            $raw.unwrap_or_else(|| <kind::$kind as kind::Kind>::raw_default($default)),
        )?
    };
}

/// An option's default as the README writes it, if the option has one.
macro_rules! default_text {
    ($kind:ident) => {
        None
    };
    ($kind:ident, $default:expr) => {{
        let default: <kind::$kind as kind::Kind>::Default = $default;
        Some(default.to_string())
    }};
}
