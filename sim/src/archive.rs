//! Deterministic repository archives: a ustar tar of a tree, optionally wrapped in gzip with stored (uncompressed)
//! deflate blocks, and a zip with stored entries, so no compression library is needed.

use crate::store::repo::Tree;

/// A tar archive of `tree` with every path under `prefix/`.
pub fn tar(tree: &Tree, prefix: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for (path, content) in tree {
        let name = format!("{prefix}/{path}");
        let mut header = [0u8; 512];
        let name_bytes = name.as_bytes();
        let len = name_bytes.len().min(99);
        header[..len].copy_from_slice(&name_bytes[..len]);
        write_octal(&mut header[100..108], 0o644);
        write_octal(&mut header[108..116], 0);
        write_octal(&mut header[116..124], 0);
        write_octal(&mut header[124..136], content.len() as u64);
        write_octal(&mut header[136..148], 0);
        header[148..156].copy_from_slice(b"        ");
        header[156] = b'0';
        header[257..263].copy_from_slice(b"ustar\0");
        header[263..265].copy_from_slice(b"00");
        let sum: u64 = header.iter().map(|b| u64::from(*b)).sum();
        write_octal(&mut header[148..155], sum);
        out.extend_from_slice(&header);
        out.extend_from_slice(content);
        let pad = (512 - content.len() % 512) % 512;
        out.extend(std::iter::repeat(0u8).take(pad));
    }
    out.extend(std::iter::repeat(0u8).take(1024));
    out
}

/// A zip archive of `tree` with every path under `prefix/`, entries stored (not compressed), dated 1980-01-01.
pub fn zip(tree: &Tree, prefix: &str) -> Vec<u8> {
    fn u16le(out: &mut Vec<u8>, v: usize) {
        out.extend_from_slice(&u16::try_from(v).unwrap_or(u16::MAX).to_le_bytes());
    }
    fn u32le(out: &mut Vec<u8>, v: usize) {
        out.extend_from_slice(&u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes());
    }
    const DATE: usize = 0x21; // 1980-01-01 in DOS date format
    let mut out = Vec::new();
    let mut central = Vec::new();
    let mut count = 0;
    for (path, data) in tree {
        let name = format!("{prefix}/{path}");
        let crc = crc32(data) as usize;
        let offset = out.len();
        u32le(&mut out, 0x0403_4b50);
        for v in [10, 0, 0, 0, DATE] {
            u16le(&mut out, v);
        }
        for v in [crc, data.len(), data.len()] {
            u32le(&mut out, v);
        }
        u16le(&mut out, name.len());
        u16le(&mut out, 0);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        u32le(&mut central, 0x0201_4b50);
        for v in [20, 10, 0, 0, 0, DATE] {
            u16le(&mut central, v);
        }
        for v in [crc, data.len(), data.len()] {
            u32le(&mut central, v);
        }
        for v in [name.len(), 0, 0, 0, 0] {
            u16le(&mut central, v);
        }
        u32le(&mut central, 0);
        u32le(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
        count += 1;
    }
    let central_offset = out.len();
    let central_len = central.len();
    out.extend_from_slice(&central);
    u32le(&mut out, 0x0605_4b50);
    for v in [0, 0, count, count] {
        u16le(&mut out, v);
    }
    u32le(&mut out, central_len);
    u32le(&mut out, central_offset);
    u16le(&mut out, 0);
    out
}

fn write_octal(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    let bytes = text.as_bytes();
    let start = bytes.len().saturating_sub(digits);
    field[..digits].copy_from_slice(&bytes[start..]);
    field[digits] = 0;
}

/// Wraps `data` in a gzip member using stored deflate blocks.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let mut chunks = data.chunks(65_535).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        out.push(u8::from(chunks.peek().is_none()));
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// CRC-32 (IEEE), as gzip needs.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_and_layout() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let tree = Tree::from([("a.txt".to_string(), b"hi".to_vec())]);
        let t = tar(&tree, "p-main");
        assert_eq!(t.len(), 512 + 512 + 1024);
        assert!(t.starts_with(b"p-main/a.txt"));
        let g = gzip(&t);
        assert_eq!(&g[..2], &[0x1f, 0x8b]);
        assert_eq!(g.len(), 10 + 5 + t.len() + 8);
    }
}
