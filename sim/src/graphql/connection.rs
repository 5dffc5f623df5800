//! Connections as the service shapes them (`count`, `nodes`, `edges { node cursor }`, `pageInfo`): one page of
//! nodes after a cursor, at most 100, and the complexity the service gives a resolver-backed connection field.
//!
//! The complexity is GitLab's own rule (`Types::BaseField#field_resolver_complexity` with
//! `Resolvers::BaseResolver`), not graphql-ruby's default `first` × children: the field costs what lies under it
//! once plus its resolver's complexity (1, +1 with `sort`, +5 with `search`), and that sum grows by 1% per item
//! the page may hold (`min(first, 100)`), except when `iid` or `iids` names the items (then not at all); rounded
//! down. So naming 100 issues by iid costs what naming one does.

use async_graphql::Result as GqlResult;

/// GitLab's `default_max_page_size`: a connection never answers more nodes than this.
pub const MAX_PAGE: usize = 100;

/// `Resolvers::BaseResolver.resolver_complexity`: 1, +1 when sorted (`sort` given, or defaulted as the service's
/// project, issue and merge request lists default it), +5 when searching.
pub fn resolver_complexity(sorted: bool, searched: bool) -> usize {
    1 + usize::from(sorted) + if searched { 5 } else { 0 }
}

/// The complexity of a resolver-backed connection field, as GitLab's `field_resolver_complexity` counts it:
/// `c = child + resolver`, then `c += c × min(first, 100) × multiplier` where the multiplier
/// (`complexity_multiplier`) is 0 when the items are named by `iid`/`iids` and 0.01 otherwise; rounded down.
pub fn connection_complexity(child: usize, resolver: usize, first: Option<i32>, by_iid: bool) -> usize {
    let complexity = child.saturating_add(resolver);
    if by_iid {
        return complexity;
    }
    let page = first.map_or(MAX_PAGE, |n| usize::try_from(n).unwrap_or(0).min(MAX_PAGE));
    // As the service counts it, in floating point: c + c × (page × 0.01), then `to_i`.
    let c = complexity as f64;
    let grown = c + c * (page as f64 * 0.01);
    grown as usize
}

/// One page of a connection: the nodes from `after` on, at most `first` (capped at 100) of them.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// This page's nodes.
    pub nodes: Vec<T>,
    /// How many nodes precede this page.
    pub start: usize,
    /// How many nodes all pages hold.
    pub total: usize,
}

impl<T: Clone> Page<T> {
    /// The page of `all` that `first` and `after` ask for.
    pub fn new(mut all: Vec<T>, first: Option<i32>, after: Option<&str>) -> GqlResult<Page<T>> {
        let total = all.len();
        let start = match after {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .map_err(|_| async_graphql::Error::new("Please provide a valid cursor"))?,
        }
        .min(total);
        let first = match first {
            None => MAX_PAGE,
            Some(n) if n < 0 => {
                return Err("first must be greater than or equal to 0".into());
            }
            Some(n) => usize::try_from(n).unwrap_or(MAX_PAGE).min(MAX_PAGE),
        };
        let end = start.saturating_add(first).min(total);
        all.truncate(end);
        let nodes = all.split_off(start);
        Ok(Page { nodes, start, total })
    }

    /// This page's edges.
    pub fn edges(&self) -> Vec<Edge<T>> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(n, node)| Edge {
                node: node.clone(),
                cursor: (self.start + n + 1).to_string(),
            })
            .collect()
    }

    /// Where this page lies.
    pub fn page_info(&self) -> PageInfo {
        let end = self.start + self.nodes.len();
        PageInfo {
            has_next_page: end < self.total,
            has_previous_page: self.start > 0,
            start_cursor: (!self.nodes.is_empty()).then(|| (self.start + 1).to_string()),
            end_cursor: (!self.nodes.is_empty()).then(|| end.to_string()),
        }
    }
}

/// One edge: a node and the cursor that pages after it.
#[derive(Debug, Clone)]
pub struct Edge<T> {
    /// The node.
    pub node: T,
    /// The cursor that pages after it.
    pub cursor: String,
}

/// `PageInfo`.
#[derive(async_graphql::SimpleObject)]
pub struct PageInfo {
    /// Whether more nodes follow this page.
    has_next_page: bool,
    /// Whether nodes precede this page.
    has_previous_page: bool,
    /// The first node's cursor.
    start_cursor: Option<String>,
    /// The last node's cursor.
    end_cursor: Option<String>,
}

/// Declares a connection type `$conn` and its edge type `$edge` over nodes `$node`.
macro_rules! connection {
    ($conn:ident, $conn_name:literal, $edge:ident, $edge_name:literal, $node:ty) => {
        /// A connection of the service's shape: `count`, `nodes`, `edges`, `pageInfo`.
        pub struct $conn(pub $crate::graphql::connection::Page<$node>);

        #[async_graphql::Object(name = $conn_name)]
        impl $conn {
            /// How many nodes all pages hold.
            async fn count(&self) -> usize {
                self.0.total
            }

            /// This page's nodes.
            async fn nodes(&self) -> Vec<Option<$node>> {
                self.0.nodes.iter().cloned().map(Some).collect()
            }

            /// This page's edges.
            async fn edges(&self) -> Vec<Option<$edge>> {
                self.0.edges().into_iter().map(|e| Some($edge(e))).collect()
            }

            /// Where this page lies.
            async fn page_info(&self) -> $crate::graphql::connection::PageInfo {
                self.0.page_info()
            }
        }

        /// An edge of the connection.
        pub struct $edge($crate::graphql::connection::Edge<$node>);

        #[async_graphql::Object(name = $edge_name)]
        impl $edge {
            /// The node.
            async fn node(&self) -> Option<$node> {
                Some(self.0.node.clone())
            }

            /// The cursor that pages after this node.
            async fn cursor(&self) -> &str {
                &self.0.cursor
            }
        }
    };
}

pub(crate) use connection;
