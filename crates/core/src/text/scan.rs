//! The word scanner: the words of a text exactly as UAX #29 word segmentation
//! (`unicode_segmentation`'s `unicode_words`) gives them, case-folded — 64 bytes at a time for
//! ASCII and Latin text, and by `unicode_segmentation` itself wherever that is not possible.
//!
//! # One invariant, three paths
//!
//! `unicode_words()` walks the text segment by segment: every segment is computed by the same
//! state machine (`UWordBounds::next`) starting in its initial state at the previous segment's
//! end, reading only the text from there on. So the segments that follow any boundary `p` of a
//! text are exactly the segments of `text[p..]`, whatever precedes `p` (a property test checks
//! this).
//!
//! [`for_each_word`] stands at a boundary and lets the fastest path that can decide what
//! follows do so; each returns the boundary after what it decided, and what it cannot decide it
//! leaves, from the same boundary, to the next path:
//!
//! 1. the window path ([`bulk`]; x86-64, SSE2): byte masks of the next 64 bytes decide every word
//!    there that consists of ASCII letters, digits, `_`, Latin letters (U+00C0–U+02BF) and
//!    joining MidLetter/MidNum/MidNumLet, up to the first character it does not know;
//! 2. the character path ([`step`]): one segment, a character at a time, for the *fast set*
//!    below;
//! 3. the exact path ([`exact_segment`]): the one segment that `text[p..].split_word_bounds()`
//!    gives.
//!
//! # The fast set
//!
//! Every character of U+0000–U+02FF (ASCII, Latin-1 Supplement, Latin Extended-A/B, IPA,
//! spacing modifiers) and U+2000–U+22FF (general punctuation, super- and subscripts, currency,
//! letterlike symbols, number forms, arrows, mathematical operators) except those of Word_Break
//! Extend, Format or ZWJ (U+00AD soft hyphen, U+200C–U+200F, U+202A–U+202E, U+2060–U+206F,
//! U+20D0–U+20F0). Their Word_Break values are only ALetter, Numeric, MidLetter, MidNum,
//! MidNumLet, Single_Quote (treated as MidNumLet: WB6/7/11/12 use MidNumLetQ, and Hebrew
//! letters, for WB7a, are not in the set), Double_Quote (only WB7b/c give it a meaning, after
//! Hebrew letters, so it is Other here), ExtendNumLet, WSegSpace, CR, LF, Newline and Other. The
//! rules that can apply to them:
//!
//! - WB3/WB3a/WB3b: CR LF stays together; breaks around CR, LF, Newline;
//! - WB3d: a run of WSegSpace is one segment;
//! - WB4: Extend, Format and ZWJ attach to the character before them — since none is in the fast
//!   set, a segment whose end could move (the character after it is not in the set) goes to the
//!   exact path;
//! - WB5–WB13b: ALetter, Numeric and ExtendNumLet join, and MidLetter/MidNum/MidNumLet/
//!   Single_Quote join two letters (WB6/WB7) or two digits (WB11/WB12) — this needs one character
//!   of look-ahead, which again must be in the set;
//! - WB999: everything else is a segment of its own.
//!
//! WB3c (ZWJ × Extended_Pictographic), WB7a–c (Hebrew), WB13 (Katakana) and WB15/16 (regional
//! indicators) cannot fire inside a segment that starts with and consists of fast characters.
//! Notable members: U+00AA ª, U+00B5 µ, U+00BA º and U+00B8 ¸ (!) are ALetter; U+00B7 · and
//! U+2027 ‧ are MidLetter; U+2018 ‘, U+2019 ’ and U+2024 ․ are MidNumLet; U+202F (narrow no-break
//! space) is ExtendNumLet, U+00A0 (no-break space) and U+2007 are Other, U+2000–U+200A otherwise
//! WSegSpace; U+00D7 × and U+00F7 ÷ are Other; U+00B2 ², U+00BC ¼ and the like are Other but
//! numbers, so that each is a word of its own.
//!
//! A segment is a word when it has an alphanumeric character (`unicode_words`' filter). Every
//! claim here is checked by the tests below against `unicode_words()` itself.

use std::sync::LazyLock;
use unicode_segmentation::UnicodeSegmentation;

/// One word of a text, as UAX #29 word segmentation (`unicode_words`) yields it, case-folded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word<'a> {
    /// The word, lower-cased with the full Unicode mapping of every character
    /// (`char::to_lowercase`; no context-dependent final sigma).
    pub text: &'a str,
    /// True when the word has an alphabetic character (`char::is_alphabetic`). The same on the
    /// original and the folded word: lower-casing maps alphabetic characters to strings with an
    /// alphabetic character, and other characters to no alphabetic character (tested for every
    /// `char`).
    pub has_letter: bool,
}

/// Calls `f` for every word of `text` in order: exactly the segments of
/// `text.unicode_words()`, each lower-cased with `char::to_lowercase`.
///
/// `scratch` is reused for case folding, so no word allocates: a word is passed as a slice of
/// `text` when it is already lower case, else as a slice of `scratch`, which holds a folded word
/// or a lower-cased copy of a 64-byte window (whose words, capitalised or not, are then all
/// passed from there) and so grows to about 64 bytes plus the longest folded word.
pub fn for_each_word(text: &str, scratch: &mut String, f: impl FnMut(Word<'_>)) {
    scan(text, scratch, HAVE_BULK, f);
}

/// Whether [`bulk`] has a vectorised mask builder on this target; without one, every segment
/// takes [`step`], which is measured to be faster than building the masks byte by byte.
const HAVE_BULK: bool = cfg!(all(target_arch = "x86_64", target_feature = "sse2"));

/// [`for_each_word`], with or without the 64-byte window path (the tests run both).
fn scan<F: FnMut(Word<'_>)>(text: &str, scratch: &mut String, use_bulk: bool, mut f: F) {
    let t: &Tables = &TABLES;
    let n = text.len();
    // Invariant: `pos` is a segment boundary of `text` (see the module documentation).
    let mut pos = 0;
    while pos < n {
        if use_bulk {
            let next = bulk(t, text, pos, scratch, &mut f);
            if next > pos {
                pos = next;
                continue;
            }
        }
        pos = step(t, text, pos, scratch, &mut f);
    }
}

/// The segment that starts at the boundary `pos` (or several that are not words): passes the
/// words to `f` and returns the boundary after them.
#[inline]
fn step<F: FnMut(Word<'_>)>(
    t: &Tables,
    text: &str,
    pos: usize,
    scratch: &mut String,
    f: &mut F,
) -> usize {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let (e, len) = t.entry(bytes, pos);
    let class = e & CLASS;
    match class {
        LETTER | NUMERIC | EXTEND_NUM_LET => scan_word(t, text, pos, e, len, scratch, f),
        SLOW => exact_segment(text, pos, scratch, f),
        _ => {
            // WB3d: WSegSpace × WSegSpace; WB3: CR × LF; else WB999: one character (and as
            // many more ASCII punctuation characters as follow, each a segment of its own).
            let mut end = pos + len;
            if class == SPACE {
                while end < n {
                    let (e2, len2) = t.entry(bytes, end);
                    if e2 & CLASS != SPACE {
                        break;
                    }
                    end += len2;
                }
            } else if bytes[pos] == b'\r' && bytes.get(end) == Some(&b'\n') {
                end += 1;
            } else if e & ALNUM == 0 {
                while end < n && is_ascii_single(bytes[end]) {
                    end += 1;
                }
            }
            if end < n && t.entry(bytes, end).0 & CLASS == SLOW {
                // WB4: an Extend or Format character after it would join the last segment.
                exact_segment(text, pos, scratch, f)
            } else {
                if e & ALNUM != 0 {
                    // A number of Word_Break Other such as ² or ½ is a word of its own.
                    emit(&text[pos..end], e, scratch, f);
                }
                end
            }
        }
    }
}

/// An ASCII character that is a segment of its own whatever precedes it, unless an Extend or
/// Format character follows: neither letter, digit, `_`, space nor CR.
fn is_ascii_single(b: u8) -> bool {
    b.is_ascii() && !b.is_ascii_alphanumeric() && !matches!(b, b'_' | b' ' | b'\r')
}

/// The 64-byte window path: the words among the next 64 bytes that it can decide from masks of
/// byte properties, passed to `f`; returns the boundary after them (`pos` when it can decide
/// none, so that [`step`] takes over).
///
/// A *run* is a maximal stretch of bytes that belong to words: ASCII letters, digits and `_`,
/// the two bytes of a Latin letter from U+00C0–U+02BF but × and ÷ (lead bytes C3–CA; all
/// ALetter and alphabetic), and MidLetter/MidNum/MidNumLet/Single_Quote between two letters or
/// two digits (WB6/7, WB11/12). Every other byte is *known* — ASCII, or a character of the
/// tables that is Other or WSegSpace and no number: such characters are segments that are no
/// word (WB3a/b, WB3d, WB999) — or *unknown*. A run is decided when all bytes before it in the
/// window are known, the byte after it is known (so no WB4 Extend or Format follows) and, when
/// that byte is a MidX that could join (a letter or digit before it), the byte after that one
/// is known too; then it is exactly one segment.
///
/// The start of a decided run is a boundary: `pos` is one, and any other run start follows a
/// known byte that is not part of a word, which no rule joins to a letter, digit or `_`. The
/// start of the first undecided run is a boundary too, for the same reason.
#[inline(always)]
fn bulk<F: FnMut(Word<'_>)>(
    t: &Tables,
    text: &str,
    pos: usize,
    scratch: &mut String,
    f: &mut F,
) -> usize {
    let bytes = text.as_bytes();
    let rest = &bytes[pos..];
    let padded: [u8; 64];
    let (window, len, at_end) = match rest.first_chunk::<64>() {
        Some(w) => (w, 64, rest.len() == 64),
        None => {
            // Zero bytes (NUL is Other) after the end of the text.
            let mut w = [0u8; 64];
            w[..rest.len()].copy_from_slice(rest);
            padded = w;
            (&padded, rest.len(), true)
        }
    };
    let m = Masks::of(window);
    // Latin letters: lead byte C3–CA, but not C3 97 (×) or C3 B7 (÷), and its continuation.
    let latin_lead = m.lead & !(m.c3 & (m.xd >> 1));
    // (In UTF-8 the byte after a lead byte is its continuation byte.)
    let latin = latin_lead | (latin_lead << 1);
    let mut unknown = m.high & !latin;
    // Other non-ASCII characters of the tables that are Other or WSegSpace and no number
    // (« » © – — … • „ “ ” → NBSP, thin space, …) belong to no word and no rule joins them to
    // a neighbour but WB4, so they are known too. Only up to the first truly unknown one:
    // nothing after it is used.
    while let k @ 0..64 = unknown.trailing_zeros() as usize {
        // (Whole characters only: the text is UTF-8, and a character that might not end in
        // the window stays unknown.)
        let (e, char_len) = if k + 3 <= 64 {
            t.entry(window, k)
        } else {
            (SLOW, 0)
        };
        if !matches!(e & CLASS, OTHER | SPACE) || e & ALNUM != 0 {
            break;
        }
        unknown &= !(((1u64 << char_len) - 1) << k);
    }
    let letter = m.alpha | latin;
    let alnum = letter | m.digit;
    // WB6/WB7 and WB11/WB12 as bit arithmetic: bit k of `x << 1` is byte k - 1, of `x >> 1`
    // byte k + 1. A mid at the window's last byte joins nothing here (the run is then cut).
    let mid_after = (m.midl & (letter << 1)) | (m.midn & (m.digit << 1));
    let join =
        (m.midl & (letter << 1) & (letter >> 1)) | (m.midn & (m.digit << 1) & (m.digit >> 1));
    let word = alnum | m.under | join;
    // Bytes before `known_end` are known, or the end of the text.
    let first_unknown = unknown.trailing_zeros() as usize;
    let known_end = if at_end && first_unknown >= len {
        len + 1
    } else {
        first_unknown.min(len)
    };
    // A run that ends at `end_limit` or later ends where the window cannot tell: at the first
    // unknown byte or the window's end, or at a mid whose next byte is one of those.
    let end_limit = match known_end.checked_sub(1) {
        Some(k) if k < 64 && mid_after >> k & 1 != 0 => k,
        _ => known_end,
    };
    // After an unknown character, a run need not start at a boundary: only the runs before it.
    let before_unknown = if first_unknown < 64 {
        (1u64 << first_unknown) - 1
    } else {
        !0
    };
    let mut starts = word & !(word << 1) & before_unknown;
    let mut lasts = word & !(word >> 1);
    let mut next = pos;
    // When a word of the window has an ASCII capital, every word of the window is passed from
    // a lower-cased copy of the window (to its last whole character) in `scratch`: one copy per
    // window, and no branch per word on whether it has capitals.
    let lowered = m.upper & word & before_unknown != 0;
    if lowered {
        let mut cut = pos + len;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        scratch.clear();
        scratch.push_str(&text[pos..cut]);
        scratch.make_ascii_lowercase();
    }
    while starts != 0 {
        let s = starts.trailing_zeros() as usize;
        let e = lasts.trailing_zeros() as usize + 1;
        starts &= starts - 1;
        lasts &= lasts - 1;
        if e >= end_limit {
            // The start of the run is a boundary; `step` or the next window decides its end.
            return pos + s;
        }
        let run = (!0u64 >> (64 - (e - s))) << s;
        if alnum & run == 0 {
            next = pos + e;
            continue;
        }
        let has_letter = letter & run != 0;
        if latin_lead & run != 0 && latin_changes_case(t, window, latin_lead & run) {
            // Latin letters that change case (À–Þ, Ā, …): folded after the copy.
            if !lowered {
                scratch.clear();
            }
            let base = scratch.len();
            t.fold_onto(&text[pos + s..pos + e], scratch);
            f(Word {
                text: &scratch[base..],
                has_letter,
            });
            scratch.truncate(base);
        } else {
            f(Word {
                text: if lowered {
                    &scratch[s..e]
                } else {
                    &text[pos + s..pos + e]
                },
                has_letter,
            });
        }
        next = pos + e;
    }
    if at_end && first_unknown >= len {
        // The rest is known bytes that belong to no word.
        return bytes.len();
    }
    next
}

/// Whether one of the Latin letters whose lead bytes are `leads` (bits of `window`) changes
/// case.
fn latin_changes_case(t: &Tables, window: &[u8; 64], mut leads: u64) -> bool {
    while leads != 0 {
        let k = leads.trailing_zeros() as usize;
        leads &= leads - 1;
        let (e, _) = t.entry(&window[k..], 0);
        if e & CHANGES_CASE != 0 {
            return true;
        }
    }
    false
}

/// Byte properties of a 64-byte window, one bit per byte (bit k: byte k).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    /// ASCII letters.
    alpha: u64,
    /// ASCII upper-case letters.
    upper: u64,
    /// ASCII digits.
    digit: u64,
    /// `_` (ExtendNumLet).
    under: u64,
    /// `.` `:` `'`: MidLetter, MidNumLet, Single_Quote.
    midl: u64,
    /// `.` `,` `;` `'`: MidNum, MidNumLet, Single_Quote.
    midn: u64,
    /// Bytes 80–FF.
    high: u64,
    /// Bytes C3–CA (lead bytes of U+00C0–U+02BF).
    lead: u64,
    /// Byte C3.
    c3: u64,
    /// Bytes 97 and B7 (the continuation bytes of × and ÷).
    xd: u64,
}

impl Masks {
    /// The masks of `w`.
    #[inline(always)]
    fn of(w: &[u8; 64]) -> Masks {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU has AVX-512 BW, checked just above.
            return unsafe { Masks::of_avx512(w) };
        }
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            // SAFETY: the function needs SSE2, and this is compiled only where SSE2 is enabled.
            unsafe { Masks::of_sse2(w) }
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        Masks::of_bytes(w)
    }

    /// The masks, one byte at a time: the reference for [`Masks::of_sse2`] (and the portable
    /// fallback, which [`HAVE_BULK`] does not use).
    #[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
    fn of_bytes(w: &[u8; 64]) -> Masks {
        let mut m = Masks::default();
        for (k, &b) in w.iter().enumerate() {
            let bit = |on: bool| u64::from(on) << k;
            m.alpha |= bit(b.is_ascii_alphabetic());
            m.upper |= bit(b.is_ascii_uppercase());
            m.digit |= bit(b.is_ascii_digit());
            m.under |= bit(b == b'_');
            m.midl |= bit(matches!(b, b'.' | b':' | b'\''));
            m.midn |= bit(matches!(b, b'.' | b',' | b';' | b'\''));
            m.high |= bit(b >= 0x80);
            m.lead |= bit((0xc3..=0xca).contains(&b));
            m.c3 |= bit(b == 0xc3);
            m.xd |= bit(b == 0x97 || b == 0xb7);
        }
        m
    }

    /// The masks, 16 bytes at a time with SSE2.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[target_feature(enable = "sse2")]
    #[inline]
    fn of_sse2(w: &[u8; 64]) -> Masks {
        use std::arch::x86_64::*;
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        // Bytes in lo..=hi: shift the range to start at -128, then one signed comparison.
        let range = |v: __m128i, lo: u8, hi: u8| {
            let shifted = _mm_add_epi8(v, splat(0x80u8.wrapping_sub(lo)));
            _mm_cmplt_epi8(shifted, splat(0x80 + (hi - lo) + 1))
        };
        let bits = |v: __m128i| u64::from(_mm_movemask_epi8(v) as u16);
        let mut m = Masks::default();
        for (i, chunk) in w.chunks_exact(16).enumerate() {
            let half =
                |at: usize| i64::from_le_bytes(chunk[at..at + 8].try_into().expect("8 bytes"));
            let v = _mm_set_epi64x(half(8), half(0));
            let at = 16 * i;
            let eq = |b: u8| _mm_cmpeq_epi8(v, splat(b));
            m.alpha |= bits(range(_mm_or_si128(v, splat(0x20)), b'a', b'z')) << at;
            m.upper |= bits(range(v, b'A', b'Z')) << at;
            m.digit |= bits(range(v, b'0', b'9')) << at;
            m.under |= bits(eq(b'_')) << at;
            let either = _mm_or_si128(eq(b'.'), eq(b'\''));
            m.midl |= bits(_mm_or_si128(either, eq(b':'))) << at;
            m.midn |= bits(_mm_or_si128(either, _mm_or_si128(eq(b','), eq(b';')))) << at;
            m.high |= bits(v) << at;
            m.lead |= bits(range(v, 0xc3, 0xca)) << at;
            m.c3 |= bits(eq(0xc3)) << at;
            m.xd |= bits(_mm_or_si128(eq(0x97), eq(0xb7))) << at;
        }
        m
    }
}

impl Masks {
    /// The masks of the whole window at once with AVX-512 BW: each property is one comparison
    /// of the 64 bytes that yields its mask directly, where SSE2 takes four comparisons and four
    /// `movemask`s.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512bw")]
    fn of_avx512(w: &[u8; 64]) -> Masks {
        use std::arch::x86_64::*;
        // SAFETY: `w` is 64 bytes, the width of the load.
        let v = unsafe { _mm512_loadu_si512(w.as_ptr().cast()) };
        macro_rules! splat {
            ($b:expr) => {
                _mm512_set1_epi8($b as u8 as i8)
            };
        }
        // Bytes in lo..=hi: one unsigned comparison of `b − lo` (wrapping) with `hi − lo`.
        macro_rules! range {
            ($v:expr, $lo:expr, $hi:expr) => {
                _mm512_cmple_epu8_mask(_mm512_sub_epi8($v, splat!($lo)), splat!($hi - $lo))
            };
        }
        macro_rules! eq {
            ($b:expr) => {
                _mm512_cmpeq_epi8_mask(v, splat!($b))
            };
        }
        let either = eq!(b'.') | eq!(b'\'');
        Masks {
            alpha: range!(_mm512_or_si512(v, splat!(0x20)), b'a', b'z'),
            upper: range!(v, b'A', b'Z'),
            digit: range!(v, b'0', b'9'),
            under: eq!(b'_'),
            midl: either | eq!(b':'),
            midn: either | eq!(b',') | eq!(b';'),
            high: _mm512_movepi8_mask(v),
            lead: range!(v, 0xc3u8, 0xcau8),
            c3: eq!(0xc3u8),
            xd: eq!(0x97u8) | eq!(0xb7u8),
        }
    }
}

/// The segment that starts with the letter, digit or ExtendNumLet at `start` (entry `e0`, `len0`
/// bytes): passes it to `f` when it is a word and returns its end. Gives the segment to
/// [`exact_segment`] when a character it needs to see is not in the fast set.
#[inline(always)]
fn scan_word<F: FnMut(Word<'_>)>(
    t: &Tables,
    text: &str,
    start: usize,
    e0: u8,
    len0: usize,
    scratch: &mut String,
    f: &mut F,
) -> usize {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut flags = e0;
    let mut state = e0 & CLASS;
    let mut i = start + len0;
    while i < n {
        // The common case first: a run of ASCII letters.
        let b = bytes[i];
        if b < 0x80 {
            let e = t.low[b as usize];
            if e & CLASS == LETTER {
                flags |= e;
                state = LETTER;
                i += 1;
                continue;
            }
        }
        let (e, len) = t.entry(bytes, i);
        let class = e & CLASS;
        match class {
            // WB5, WB8, WB9, WB10, WB13a, WB13b.
            LETTER | NUMERIC | EXTEND_NUM_LET => {
                state = class;
                flags |= e;
                i += len;
            }
            MID_LETTER | MID_NUM | MID_NUM_LET => {
                // WB6/WB7: AHLetter × (MidLetter | MidNumLetQ) × AHLetter;
                // WB11/WB12: Numeric × (MidNum | MidNumLetQ) × Numeric. Else WB999.
                let want = match (state, class) {
                    (LETTER, MID_LETTER | MID_NUM_LET) => LETTER,
                    (NUMERIC, MID_NUM | MID_NUM_LET) => NUMERIC,
                    _ => break,
                };
                let j = i + len;
                if j >= n {
                    break;
                }
                let (e2, len2) = t.entry(bytes, j);
                let class2 = e2 & CLASS;
                if class2 == want {
                    flags |= e | e2;
                    i = j + len2;
                } else if class2 == SLOW {
                    // WB4 would skip an Extend or Format character here.
                    return exact_segment(text, start, scratch, f);
                } else {
                    break;
                }
            }
            // WB4 (an Extend or Format character joins the word) or a script the fast path does
            // not know.
            SLOW => return exact_segment(text, start, scratch, f),
            // WSegSpace, CR, LF, Newline, Other: WB3a, WB999.
            _ => break,
        }
    }
    if flags & ALNUM != 0 {
        emit(&text[start..i], flags, scratch, f);
    }
    i
}

/// Passes a word found by the fast path, folded with the help of the OR of its characters'
/// table entries.
#[inline(always)]
fn emit<F: FnMut(Word<'_>)>(word: &str, flags: u8, scratch: &mut String, f: &mut F) {
    let has_letter = flags & ALPHA != 0;
    if flags & CHANGES_CASE == 0 {
        f(Word {
            text: word,
            has_letter,
        });
    } else {
        if flags & NON_ASCII == 0 {
            scratch.clear();
            scratch.push_str(word);
            scratch.make_ascii_lowercase();
        } else {
            fold_into(word, scratch);
        }
        f(Word {
            text: scratch,
            has_letter,
        });
    }
}

/// The exact path: the one segment of `text` that starts at the boundary `pos`, from
/// `unicode_segmentation` itself; passes it to `f` when it is a word and returns its end.
#[inline(never)]
fn exact_segment<F: FnMut(Word<'_>)>(
    text: &str,
    pos: usize,
    scratch: &mut String,
    f: &mut F,
) -> usize {
    let segment = text[pos..]
        .split_word_bounds()
        .next()
        .expect("a non-empty text has a first segment");
    // `unicode_words`' filter: a word has an Alphabetic or General_Category=Number character.
    if segment.chars().any(char::is_alphanumeric) {
        let has_letter = segment.chars().any(char::is_alphabetic);
        if segment.chars().any(changes_case) {
            fold_into(segment, scratch);
            f(Word {
                text: scratch,
                has_letter,
            });
        } else {
            f(Word {
                text: segment,
                has_letter,
            });
        }
    }
    pos + segment.len()
}

/// `word` lower-cased character by character with the full mapping, into `out`.
fn fold_into(word: &str, out: &mut String) {
    out.clear();
    TABLES.fold_onto(word, out);
}

/// True when `char::to_lowercase` does not map `c` to itself.
fn changes_case(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_uppercase();
    }
    let mut lower = c.to_lowercase();
    !(lower.next() == Some(c) && lower.next().is_none())
}

// A table entry: the fast path's Word_Break class in the low four bits, properties in the high.

/// The mask of the class bits.
const CLASS: u8 = 0x0f;
/// Not in the fast set: Extend, Format, ZWJ, or outside the tables.
const SLOW: u8 = 0;
/// ALetter.
const LETTER: u8 = 1;
/// Numeric.
const NUMERIC: u8 = 2;
/// ExtendNumLet.
const EXTEND_NUM_LET: u8 = 3;
/// MidLetter.
const MID_LETTER: u8 = 4;
/// MidNum.
const MID_NUM: u8 = 5;
/// MidNumLet and Single_Quote.
const MID_NUM_LET: u8 = 6;
/// WSegSpace.
const SPACE: u8 = 7;
/// CR, LF, Newline, Double_Quote and Other.
const OTHER: u8 = 8;
/// `char::is_alphanumeric`: a segment with such a character is a word.
const ALNUM: u8 = 0x10;
/// `char::is_alphabetic`.
const ALPHA: u8 = 0x20;
/// `char::to_lowercase` changes the character.
const CHANGES_CASE: u8 = 0x40;
/// Not ASCII.
const NON_ASCII: u8 = 0x80;

/// The Word_Break values in the two windows of the fast set, as inclusive ranges; every other
/// character there is Other. Taken from `unicode_segmentation`'s tables (WordBreakProperty.txt
/// of Unicode 17.0); the tests check every character against `unicode_words()` in context.
const RANGES: &[(u32, u32, u8)] = &[
    (0x0020, 0x0020, SPACE),
    (0x0027, 0x0027, MID_NUM_LET), // Single_Quote
    (0x002c, 0x002c, MID_NUM),
    (0x002e, 0x002e, MID_NUM_LET),
    (0x0030, 0x0039, NUMERIC),
    (0x003a, 0x003a, MID_LETTER),
    (0x003b, 0x003b, MID_NUM),
    (0x0041, 0x005a, LETTER),
    (0x005f, 0x005f, EXTEND_NUM_LET),
    (0x0061, 0x007a, LETTER),
    (0x00aa, 0x00aa, LETTER),
    (0x00ad, 0x00ad, SLOW), // Format
    (0x00b5, 0x00b5, LETTER),
    (0x00b7, 0x00b7, MID_LETTER),
    (0x00b8, 0x00b8, LETTER),
    (0x00ba, 0x00ba, LETTER),
    (0x00c0, 0x00d6, LETTER),
    (0x00d8, 0x00f6, LETTER),
    (0x00f8, 0x02d7, LETTER),
    (0x02de, 0x02ff, LETTER),
    (0x2000, 0x2006, SPACE),
    (0x2008, 0x200a, SPACE),
    (0x200c, 0x200f, SLOW), // Extend, ZWJ, Format
    (0x2018, 0x2019, MID_NUM_LET),
    (0x2024, 0x2024, MID_NUM_LET),
    (0x2027, 0x2027, MID_LETTER),
    (0x202a, 0x202e, SLOW), // Format
    (0x202f, 0x202f, EXTEND_NUM_LET),
    (0x203f, 0x2040, EXTEND_NUM_LET),
    (0x2044, 0x2044, MID_NUM),
    (0x2054, 0x2054, EXTEND_NUM_LET),
    (0x205f, 0x205f, SPACE),
    (0x2060, 0x206f, SLOW), // Format (and unassigned U+2065)
    (0x2071, 0x2071, LETTER),
    (0x207f, 0x207f, LETTER),
    (0x2090, 0x209c, LETTER),
    (0x20d0, 0x20f0, SLOW), // Extend
    (0x2102, 0x2102, LETTER),
    (0x2107, 0x2107, LETTER),
    (0x210a, 0x2113, LETTER),
    (0x2115, 0x2115, LETTER),
    (0x2119, 0x211d, LETTER),
    (0x2124, 0x2124, LETTER),
    (0x2126, 0x2126, LETTER),
    (0x2128, 0x2128, LETTER),
    (0x212a, 0x212d, LETTER),
    (0x212f, 0x2139, LETTER),
    (0x213c, 0x213f, LETTER),
    (0x2145, 0x2149, LETTER),
    (0x214e, 0x214e, LETTER),
    (0x2160, 0x2188, LETTER),
];

/// The first character of the second window.
const PUNCT_BASE: u32 = 0x2000;

/// Table entries of U+0000–U+02FF (`low`) and U+2000–U+22FF (`punct`): the one- and two-byte
/// characters up to U+02FF and the three-byte characters with lead byte E2 and second byte
/// 80–8B.
struct Tables {
    low: [u8; 0x300],
    punct: [u8; 0x300],
    /// `char::to_lowercase` of U+0000–U+02FF where it is one character (else NUL).
    low_lower: [char; 0x300],
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let mut t = Tables {
        low: [0; 0x300],
        punct: [0; 0x300],
        low_lower: ['\0'; 0x300],
    };
    for (i, e) in t.low.iter_mut().enumerate() {
        *e = table_entry(i as u32);
    }
    for (i, l) in t.low_lower.iter_mut().enumerate() {
        let mut lower = char::from_u32(i as u32)
            .expect("no surrogate")
            .to_lowercase();
        if let (Some(c), None) = (lower.next(), lower.next()) {
            *l = c;
        }
    }
    for (i, e) in t.punct.iter_mut().enumerate() {
        *e = table_entry(PUNCT_BASE + i as u32);
    }
    t
});

/// The table entry of code point `cp` (in one of the windows).
fn table_entry(cp: u32) -> u8 {
    let class = RANGES
        .iter()
        .find(|&&(lo, hi, _)| (lo..=hi).contains(&cp))
        .map_or(OTHER, |&(_, _, class)| class);
    if class == SLOW {
        return SLOW;
    }
    let c = char::from_u32(cp).expect("the windows hold no surrogates");
    let mut e = class;
    if c.is_alphanumeric() {
        e |= ALNUM;
    }
    if c.is_alphabetic() {
        e |= ALPHA;
    }
    if changes_case(c) {
        e |= CHANGES_CASE;
    }
    if !c.is_ascii() {
        e |= NON_ASCII;
    }
    e
}

impl Tables {
    /// Appends `word` lower-cased, character by character with the full mapping, to `out`.
    fn fold_onto(&self, word: &str, out: &mut String) {
        for c in word.chars() {
            match self.low_lower.get(c as usize) {
                Some(&lower) if lower != '\0' => out.push(lower),
                _ => out.extend(c.to_lowercase()),
            }
        }
    }

    /// The entry and UTF-8 length of the character that starts at `bytes[i]`; `(SLOW, 0)` for a
    /// character outside the tables.
    #[inline(always)]
    fn entry(&self, bytes: &[u8], i: usize) -> (u8, usize) {
        let b = bytes[i];
        if b < 0x80 {
            (self.low[b as usize], 1)
        } else if b < 0xcc {
            // C2–CB: U+0080–U+02FF (valid UTF-8 has no C0, C1 or continuation byte here).
            let cp = (usize::from(b & 0x1f) << 6) | usize::from(bytes[i + 1] & 0x3f);
            (self.low[cp], 2)
        } else if b == 0xe2 && bytes[i + 1] < 0x8c {
            // E2 80–8B xx: U+2000–U+22FF.
            let cp = (usize::from(bytes[i + 1] & 0x3f) << 6) | usize::from(bytes[i + 2] & 0x3f);
            (self.punct[cp], 3)
        } else {
            (SLOW, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::Path;

    /// The words by definition: `unicode_words()`, folded per character (the path the scanner
    /// replaced).
    fn reference(text: &str) -> Vec<(String, bool)> {
        text.unicode_words()
            .map(|w| {
                (
                    w.chars().flat_map(char::to_lowercase).collect(),
                    w.chars().any(char::is_alphabetic),
                )
            })
            .collect()
    }

    /// The words of `for_each_word`, and those of the path without 64-byte windows (which
    /// must be the same).
    fn scanned(text: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut scratch = String::new();
        for_each_word(text, &mut scratch, |w| {
            out.push((w.text.to_owned(), w.has_letter))
        });
        let mut steps = Vec::new();
        scan(text, &mut scratch, !HAVE_BULK, |w| {
            steps.push((w.text.to_owned(), w.has_letter))
        });
        assert_eq!(out, steps, "{text:?}: with and without windows");
        out
    }

    #[track_caller]
    fn check(text: &str) {
        let (want, got) = (reference(text), scanned(text));
        assert!(
            want == got,
            "{text:?}:\nreference {want:?}\nscanned   {got:?}"
        );
    }

    #[test]
    fn unicode_versions_agree() {
        // The tables' properties come from `char`, `unicode_words`' from its own tables; they
        // agree only when both are the same Unicode version (and the ranges above are 17.0).
        assert_eq!(
            char::UNICODE_VERSION,
            (17, 0, 0),
            "update RANGES to this Unicode version"
        );
        let (a, b, c) = unicode_segmentation::UNICODE_VERSION;
        assert_eq!((a as u8, b as u8, c as u8), char::UNICODE_VERSION);
    }

    #[test]
    fn examples() {
        for text in [
            "",
            "Hello, world! can't e.g. var1 123,456 foo_bar example.com 127.0.0.1:9090",
            "The Theory of Relativity, 1915 — Einstein's E=mc² (Straße)",
            "Grüße aus Köln: „Übermorgen“ – ÆØÅ æøå İstanbul ŁÓDŹ ǅ ǈ ß ẞ",
            "don’t ½ ×÷ ª º µ · a·b a\u{b7}1 3.14 1,000,000 1'000 a.b.c a..b a._b _a_ __",
            "a\u{ad}b soft\u{ad}hyphen \u{ad}x x\u{ad} \u{a0}nbsp\u{a0}",
            "  \u{345}x \u{3000} \u{345} \u{2003}\u{301} \t\u{345}",
            "\r\n\u{345}\n\u{301}a\r\u{345}",
            "שָׁלוֹם צה\"ל ג'ירפה カタカナ 漢字 👩\u{200d}💻 🇩🇪🇫🇷 a\u{200d}☝ ١٢٣",
            "ℌ𝔢𝔩𝔩𝔬 Ω K Ⅻ ⁱ ₐ ¸ ˂ x¸y",
        ] {
            check(text);
        }
        let words: Vec<String> = scanned("Straße, DON’T, İ.")
            .into_iter()
            .map(|w| w.0)
            .collect();
        assert_eq!(words, ["straße", "don’t", "i\u{307}"]);
    }

    #[test]
    fn lower_case_words_are_borrowed_and_scratch_stays_small() {
        let text = "the quick brown fox, jumps über 3.14 lazy dogs — ".repeat(20);
        let range = text.as_bytes().as_ptr_range();
        let mut scratch = String::new();
        for_each_word(&text, &mut scratch, |w| {
            assert!(range.contains(&w.text.as_ptr()), "{:?} was copied", w.text);
        });
        assert_eq!(scratch.capacity(), 0);
        // Folding needs at most a window (64 bytes) plus a word.
        let text = "The QUICK Brown FOX Jumps ÜBER the lazy dogs. ".repeat(1000);
        let mut words = 0;
        for_each_word(&text, &mut scratch, |_| words += 1);
        assert_eq!(words, 9000);
        assert!(scratch.capacity() <= 128, "{}", scratch.capacity());
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[test]
    fn vector_masks_are_the_bytewise_masks() {
        let check = |w: &[u8; 64]| {
            // SAFETY: as in `Masks::of`.
            let sse2 = unsafe { Masks::of_sse2(w) };
            assert_eq!(sse2, Masks::of_bytes(w), "{w:?}");
            if std::is_x86_feature_detected!("avx512bw") {
                // SAFETY: the CPU has AVX-512 BW, checked just above.
                let avx512 = unsafe { Masks::of_avx512(w) };
                assert_eq!(avx512, Masks::of_bytes(w), "{w:?}");
            }
        };
        for b in 0..=255u8 {
            for k in [0, 1, 15, 16, 31, 32, 47, 48, 62, 63] {
                let mut w = [b'a'; 64];
                w[k] = b;
                check(&w);
                check(&[b; 64]);
            }
        }
        // Random windows (xorshift64), biased to the bytes that matter.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let interesting = b"aZ09_.:',; \xc2\xc3\xc4\xca\xcb\xe2\x80\x97\xb7\xbf\xff";
        for _ in 0..20_000 {
            let mut w = [0u8; 64];
            for b in &mut w {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = if state >> 63 == 0 {
                    state as u8
                } else {
                    interesting[(state >> 8) as usize % interesting.len()]
                };
            }
            check(&w);
        }
    }

    #[test]
    fn has_letter_is_the_same_before_and_after_folding() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            assert_eq!(
                c.is_alphabetic(),
                c.to_lowercase().any(char::is_alphabetic),
                "{c:?}"
            );
        }
    }

    /// Every character of the windows and around them, in contexts that exercise its class.
    #[test]
    fn every_character_in_context() {
        let before = [
            "",
            "a",
            "A",
            "1",
            "_",
            "a.",
            "1.",
            "a'",
            "1,",
            "a:",
            " ",
            "  ",
            "\u{3000}",
            "\u{345}",
            "é",
            "\r",
            "-",
            "\u{5d0}",
            "\u{30a2}",
            "\u{1f1e9}",
            "\u{200d}",
        ];
        let after = [
            "",
            "a",
            "1",
            "_",
            ".a",
            ".1",
            ",1",
            "'a",
            ":b",
            " ",
            "\u{301}",
            "\u{345}",
            "\u{ad}",
            "\u{200d}",
            "\u{200d}\u{261d}",
            "é",
            "\n",
            "x\u{301}",
            "\u{5d0}",
            "\u{30a2}",
        ];
        let ranges = [
            0..0x400u32,
            0x1f00..0x2400,
            0x2460..0x2500,
            0x3000..0x3010,
            0x30a0..0x30b0,
            0xfe00..0xfe60,
            0xff00..0xff20,
            0x1f1e6..0x1f200,
        ];
        let mut text = String::new();
        for c in ranges.into_iter().flatten().filter_map(char::from_u32) {
            for b in before {
                for a in after {
                    text.clear();
                    text.push_str(b);
                    text.push(c);
                    text.push_str(a);
                    check(&text);
                    text.push(c);
                    text.push_str(a);
                    check(&text);
                }
            }
        }
    }

    /// The same near the end of a 64-byte window: after 60–63 spaces, with more text after.
    #[test]
    fn every_character_at_a_window_end() {
        let before = ["", "a", "1", "a.", "1,", "Ab", "é"];
        let after = ["", "a", "1", ".a", ",1", " ", "\u{301}", "é", "\u{200d}"];
        let ranges = [0..0x300u32, 0x300..0x310, 0x2000..0x2300, 0x3000..0x3004];
        let mut text = String::new();
        for c in ranges.into_iter().flatten().filter_map(char::from_u32) {
            for spaces in 60..64 {
                for b in before {
                    for a in after {
                        text.clear();
                        text.extend(std::iter::repeat_n(' ', spaces));
                        text.push_str(b);
                        text.push(c);
                        text.push_str(a);
                        text.push_str(" Tail, words.");
                        check(&text);
                    }
                }
            }
        }
    }

    /// The fast path claims no character outside the windows, and inside them exactly those
    /// that RANGES lists as not SLOW.
    #[test]
    fn the_tables_cover_the_windows() {
        let mut buf = [0u8; 4];
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            let s = c.encode_utf8(&mut buf);
            let (e, len) = TABLES.entry(s.as_bytes(), 0);
            let cp = c as u32;
            let inside = cp < 0x300 || (0x2000..0x2300).contains(&cp);
            if inside {
                assert_eq!(e, table_entry(cp), "{c:?}");
            }
            if e & CLASS != SLOW {
                assert!(inside, "{c:?}");
                assert_eq!(len, s.len(), "{c:?}");
            }
        }
    }

    /// The characters the random strings are made of: ASCII (every punctuation and whitespace
    /// kind), Latin, the neighbours the fast path has to tell apart, and the scripts and
    /// sequences it leaves to the exact path.
    fn adversarial() -> impl Strategy<Value = char> {
        let pool: Vec<char> = [
            "aAzZ09_.,;:'\"-!?()[]/\\@#$%&*+=<>|~`^{}",
            " \t\n\r\u{b}\u{c}\u{85}\u{2028}\u{2029}\u{a0}\u{2007}\u{2003}\u{205f}\u{3000}\u{1680}",
            "éüßøłÆŒĳǅǈǲȘțɐʼˆ˂ˠ¸ª µº×÷¹²½¼·‧’‘‛‚„“”″–—…•€§°±→−",
            "\u{ad}\u{300}\u{301}\u{345}\u{36f}\u{20dd}\u{200b}\u{200c}\u{200d}\u{200e}\u{2060}\u{feff}",
            "\u{202f}\u{203f}\u{2054}\u{2044}\u{2024}\u{fe52}\u{fe13}\u{ff0e}\u{ff07}\u{ff1a}\u{ff3f}",
            "אבש\u{5b8}\u{5c1}׳״\u{5f3}\u{5f4}アカヲー゙ｱ漢字中\u{3002}",
            "👩💻🏽☝❤\u{fe0f}🇩🇪🇫🇷🇺\u{1f3fb}‼ℹ",
            "عرب\u{64b}\u{660}٫٬،देवनागरी\u{94d}\u{93c}१",
            "ａＡ０９\u{ff0c}\u{ff1b}ΑΣσς\u{387};Ωω\u{37e}\u{589}\u{55f}",
        ]
        .concat()
        .chars()
        .collect();
        proptest::sample::select(pool)
    }

    /// Latin-heavy: the fast path most of the time, an odd character now and then.
    fn latin() -> impl Strategy<Value = char> {
        prop_oneof![
            8 => proptest::sample::select("aeiouxAEXé ß.,':;_019 ".chars().collect::<Vec<_>>()),
            1 => adversarial(),
        ]
    }

    fn strings(chars: impl Strategy<Value = char>, len: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(chars, 0..len).prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn random_adversarial_strings(text in strings(adversarial(), 24)) {
            prop_assert_eq!(scanned(&text), reference(&text));
        }

        #[test]
        fn random_latin_strings(text in strings(latin(), 40)) {
            prop_assert_eq!(scanned(&text), reference(&text));
        }

        #[test]
        fn random_ascii_strings(text in strings(proptest::char::range('\0', '\u{7f}'), 40)) {
            // All-ASCII texts take `unicode_words`' own ASCII path.
            prop_assert_eq!(scanned(&text), reference(&text));
        }

        #[test]
        fn random_strings_of_any_character(text in strings(any::<char>(), 16)) {
            prop_assert_eq!(scanned(&text), reference(&text));
        }

        /// Long enough for several 64-byte windows, cut anywhere.
        #[test]
        fn random_long_strings(
            text in prop_oneof![strings(latin(), 300), strings(adversarial(), 120)]
        ) {
            prop_assert_eq!(scanned(&text), reference(&text));
        }

        /// The invariant the design rests on: after any segment boundary, the segments are
        /// those of the rest of the text alone.
        #[test]
        fn segments_after_a_boundary_do_not_depend_on_what_precedes(
            text in strings(adversarial(), 24)
        ) {
            let all: Vec<&str> = text.split_word_bounds().collect();
            let mut p = 0;
            for (k, s) in all.iter().enumerate() {
                let rest: Vec<&str> = text[p..].split_word_bounds().collect();
                prop_assert_eq!(&rest[..], &all[k..]);
                p += s.len();
            }
        }
    }

    /// Real text: every document must give the same words.
    fn check_documents(name: &str, docs: impl Iterator<Item = String>) {
        let mut n = 0;
        let mut words = 0;
        let mut scratch = String::new();
        for doc in docs {
            let want = reference(&doc);
            let mut got = Vec::with_capacity(want.len());
            for_each_word(&doc, &mut scratch, |w| {
                got.push((w.text.to_owned(), w.has_letter))
            });
            if want != got {
                let k = want.iter().zip(&got).take_while(|(a, b)| a == b).count();
                panic!(
                    "{name}, document {n}: word {k}: reference {:?}, scanned {:?}",
                    want.get(k),
                    got.get(k)
                );
            }
            n += 1;
            words += want.len();
        }
        eprintln!("{name}: {n} documents, {words} words agree");
    }

    /// The repository root (this crate sits in `crates/core`).
    fn root() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
    }

    fn files(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map(|d| d.map(|e| e.expect("directory entry").path()).collect())
            .unwrap_or_default();
        paths.sort();
        paths
    }

    #[test]
    fn real_text_samples_and_stopwords() {
        let samples = files(&root().join("samples/wiki-en"));
        assert_eq!(samples.len(), 300);
        let read = |p: std::path::PathBuf| std::fs::read_to_string(p).expect("UTF-8 text");
        check_documents("samples/wiki-en", samples.into_iter().map(read));
        // French and Spanish: elisions (l'homme), accents, ñ, ç, guillemets.
        let leads = read(root().join("tests/data/wiki-fr-es.jsonl"));
        let leads: Vec<String> = leads
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
                v["text"].as_str().expect("a text").to_owned()
            })
            .collect();
        assert_eq!(leads.len(), 80);
        check_documents("tests/data/wiki-fr-es.jsonl", leads.into_iter());
        let stop = files(&root().join("reference-corpus/stopwords"));
        assert!(stop.len() >= 6);
        check_documents(
            "reference-corpus/stopwords",
            stop.into_iter()
                .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                .map(read),
        );
    }

    /// The fetched development data (`data/dev`), when it is there.
    #[test]
    fn real_text_dev_data() {
        for name in ["manpages-de.jsonl", "wiki-en.jsonl"] {
            let Ok(raw) = std::fs::read_to_string(root().join("data/dev").join(name)) else {
                continue;
            };
            let docs = raw.lines().filter(|l| !l.trim().is_empty()).map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
                v["text"].as_str().unwrap_or_default().to_owned()
            });
            check_documents(name, docs);
        }
        for dir in ["debian-copyright", "crates"] {
            let docs = files(&root().join("data/dev").join(dir))
                .into_iter()
                .filter_map(|p| std::fs::read(p).ok())
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            check_documents(dir, docs);
        }
    }
}
