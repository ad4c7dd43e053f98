// SPDX-License-Identifier: GPL-2.0

//! Bounded little-endian reads over a byte slice at a known link-time
//! address: fixed-size integers, LEB128 (at most 10 bytes, so that a run
//! of continuation bytes cannot make a read unbounded or overflow), and
//! `DW_EH_PE_*` encoded pointers.  Every read checks the bounds first and
//! fails instead of panicking; all address arithmetic wraps, as the
//! hardware's does.

/// `DW_EH_PE_omit`: no value.
pub const DW_EH_PE_OMIT: u8 = 0xff;
/// `DW_EH_PE_indirect`: the value is the address of the pointer.
pub const DW_EH_PE_INDIRECT: u8 = 0x80;
/// `DW_EH_PE_pcrel`: relative to the field's own address.
pub const DW_EH_PE_PCREL: u8 = 0x10;
/// `DW_EH_PE_datarel`: relative to a base the section defines.
pub const DW_EH_PE_DATAREL: u8 = 0x30;

/// Why a read failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Past the end of the bytes.
    Truncated,
    /// A LEB128 longer than 10 bytes, or whose value needs more than 64
    /// bits.
    Leb,
    /// An unknown or unsupported pointer encoding.
    Encoding,
}

/// A cursor over `buf`, whose first byte is at link-time address `addr`.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    addr: u64,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `buf` (loaded at `addr`).
    pub fn new(buf: &'a [u8], addr: u64) -> Self {
        Reader { buf, pos: 0, addr }
    }

    /// The offset of the next byte.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The link-time address of the next byte.
    pub fn addr(&self) -> u64 {
        self.addr.wrapping_add(self.pos as u64)
    }

    /// The bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Whether no byte is left.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `n` bytes, consumed.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        let end = self.pos.checked_add(n).ok_or(ReadError::Truncated)?;
        let b = self.buf.get(self.pos..end).ok_or(ReadError::Truncated)?;
        self.pos = end;
        Ok(b)
    }

    /// A cursor over the next `n` bytes (consumed here), keeping their
    /// addresses: a CIE's or FDE's body, an instruction block.
    pub fn sub(&mut self, n: usize) -> Result<Reader<'a>, ReadError> {
        let addr = self.addr();
        Ok(Reader::new(self.bytes(n)?, addr))
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<(), ReadError> {
        self.bytes(n).map(|_| ())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, ReadError> {
        Ok(self.array::<1>()?[0])
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, ReadError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, ReadError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, ReadError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// An unsigned LEB128 of at most 10 bytes and 64 bits.
    pub fn uleb(&mut self) -> Result<u64, ReadError> {
        let mut v = 0u64;
        for i in 0..10u32 {
            let b = self.u8()?;
            let low = (b & 0x7f) as u64;
            // The 10th byte holds bit 63 only.
            if i == 9 && low > 1 {
                return Err(ReadError::Leb);
            }
            v |= low << i.wrapping_mul(7);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ReadError::Leb)
    }

    /// A signed LEB128 of at most 10 bytes and 64 bits.
    pub fn sleb(&mut self) -> Result<i64, ReadError> {
        let mut v = 0u64;
        for i in 0..10u32 {
            let b = self.u8()?;
            let low = (b & 0x7f) as u64;
            let shift = i.wrapping_mul(7);
            if i == 9 {
                // Bit 63 and its sign extension: all clear or all set.
                if low != 0 && low != 0x7f {
                    return Err(ReadError::Leb);
                }
                if b & 0x80 != 0 {
                    return Err(ReadError::Leb);
                }
                return Ok((v | (low << 63)) as i64);
            }
            v |= low << shift;
            if b & 0x80 == 0 {
                let bits = shift.wrapping_add(7);
                if b & 0x40 != 0 {
                    // Sign-extend from `bits` (at most 63 here).
                    v |= u64::MAX << bits;
                }
                return Ok(v as i64);
            }
        }
        Err(ReadError::Leb)
    }

    /// A value in the format of encoding `enc` (its low 4 bits), sign
    /// extended for the signed formats, with no application: an FDE's
    /// `pc_range`, or the raw value under an encoded pointer.
    pub fn format(&mut self, enc: u8) -> Result<u64, ReadError> {
        Ok(match enc & 0x0f {
            0x00 | 0x04 => self.u64()?,
            0x01 => self.uleb()?,
            0x02 => self.u16()? as u64,
            0x03 => self.u32()? as u64,
            0x09 => self.sleb()? as u64,
            0x0a => self.u16()? as i16 as i64 as u64,
            0x0b => self.u32()? as i32 as i64 as u64,
            0x0c => self.u64()?,
            _ => return Err(ReadError::Encoding),
        })
    }

    /// A pointer encoded with `enc`: absolute, `pcrel` (to the field's
    /// address), or `datarel` (to `datarel`, when the section has such a
    /// base).  `indirect` is ignored here (the result is the address of
    /// the pointer): callers that would need the pointer refuse it, the
    /// others (a personality routine) never dereference it.
    pub fn pointer(&mut self, enc: u8, datarel: Option<u64>) -> Result<u64, ReadError> {
        if enc == DW_EH_PE_OMIT {
            return Err(ReadError::Encoding);
        }
        let field = self.addr();
        let v = self.format(enc)?;
        match enc & 0x70 {
            0 => Ok(v),
            DW_EH_PE_PCREL => Ok(field.wrapping_add(v)),
            DW_EH_PE_DATAREL => Ok(datarel.ok_or(ReadError::Encoding)?.wrapping_add(v)),
            _ => Err(ReadError::Encoding),
        }
    }
}
