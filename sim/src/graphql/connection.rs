//! Connections as the service shapes them (`count`, `nodes`, `edges { node cursor }`, `pageInfo`): one page of
//! nodes after a cursor, at most 100, and the complexity graphql-ruby gives a connection field.

use async_graphql::parser::types::{Field, Selection};
use async_graphql::Result as GqlResult;

/// GitLab's `default_max_page_size`: a connection never answers more nodes than this.
pub const MAX_PAGE: usize = 100;

/// Complexity as graphql-ruby counts a connection field: 1 for itself, its metadata fields (`count`, `pageInfo`)
/// once, 1 for each of `nodes` and `edges`, and what lies under them once per possible node (`first`, or 100).
/// `field` is the connection field as written in the query (named by async-graphql's complexity attribute).
pub fn connection_complexity(first: Option<i32>, field: &Field, child: usize) -> usize {
    let page = first.map_or(MAX_PAGE, |n| usize::try_from(n).unwrap_or(0).min(MAX_PAGE));
    let mut nodes_edges = 0;
    let mut metadata = 0;
    for item in &field.selection_set.node.items {
        if let Selection::Field(f) = &item.node {
            match f.node.name.node.as_str() {
                "nodes" | "edges" => nodes_edges += 1,
                _ => metadata += count_fields(&f.node),
            }
        }
    }
    let items = child.saturating_sub(metadata + nodes_edges);
    1 + page.saturating_mul(items) + metadata + nodes_edges
}

/// A field and the fields under it, each counted 1.
fn count_fields(field: &Field) -> usize {
    1 + field
        .selection_set
        .node
        .items
        .iter()
        .map(|item| match &item.node {
            Selection::Field(f) => count_fields(&f.node),
            _ => 0,
        })
        .sum::<usize>()
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
