//! Issue boards: a project has none until one is created; a board's lists are label lists. The fixed backlog
//! and done lists are implied and never stored.

use super::Store;

/// A project's issue board.
#[derive(Debug, Clone)]
pub struct Board {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Name.
    pub name: String,
}

/// A label list on a board.
#[derive(Debug, Clone)]
pub struct BoardList {
    /// Id.
    pub id: u64,
    /// Board.
    pub board_id: u64,
    /// The label whose issues the list shows.
    pub label_id: u64,
    /// 0-based position among the board's label lists.
    pub position: u64,
}

impl Store {
    /// Creates a board in a project; returns its id.
    pub fn insert_board(&mut self, project_id: u64, name: &str) -> u64 {
        let id = self.next_id("board");
        self.boards.insert(
            id,
            Board {
                id,
                project_id,
                name: name.to_string(),
            },
        );
        id
    }

    /// Deletes a board and its lists.
    pub fn remove_board(&mut self, board_id: u64) {
        self.boards.remove(&board_id);
        self.board_lists.retain(|_, l| l.board_id != board_id);
    }

    /// A board's lists in position order.
    pub fn board_lists(&self, board_id: u64) -> Vec<&BoardList> {
        let mut lists: Vec<&BoardList> = self
            .board_lists
            .values()
            .filter(|l| l.board_id == board_id)
            .collect();
        lists.sort_by_key(|l| (l.position, l.id));
        lists
    }

    /// Renumbers a board's lists 0, 1, 2, … keeping their order.
    pub fn renumber_board_lists(&mut self, board_id: u64) {
        let ids: Vec<u64> = self.board_lists(board_id).iter().map(|l| l.id).collect();
        for (position, id) in ids.into_iter().enumerate() {
            if let Some(l) = self.board_lists.get_mut(&id) {
                l.position = u64::try_from(position).unwrap_or(u64::MAX);
            }
        }
    }
}
