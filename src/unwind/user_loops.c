// SPDX-License-Identifier: GPL-2.0
/*
 * The walk's reads of user memory (src/unwind/walk.rs): single reads that
 * never fault, and the two loops that step many frames in one user access
 * section, which cannot span calls into Rust: frame pointers
 * (unwind_rs_fp_frames()) and the rows a walk's memo holds in the common
 * form (unwind_rs_memo_run()).
 */
#include <linux/uaccess.h>

#include "unwind.h"

/*
 * Two consecutive user words (8 or 4 bytes each) at @addr, without
 * faulting: __get_user() is a macro Rust cannot call, and it is much
 * cheaper than copy_from_user_nofault()'s generic copy for 16 bytes.
 */
int unwind_rs_read_words_nofault(unsigned long addr, unsigned long *out, bool compat)
{
	int ret;

	if (compat) {
		u32 __user *p = (u32 __user *)addr;
		u32 a, b;

		if (!access_ok(p, 2 * sizeof(*p)))
			return -EFAULT;
		pagefault_disable();
		ret = __get_user(a, p) ?: __get_user(b, p + 1);
		pagefault_enable();
		if (!ret) {
			out[0] = a;
			out[1] = b;
		}
	} else {
		unsigned long __user *p = (unsigned long __user *)addr;

		if (!access_ok(p, 2 * sizeof(*p)))
			return -EFAULT;
		pagefault_disable();
		ret = __get_user(out[0], p) ?: __get_user(out[1], p + 1);
		pagefault_enable();
	}
	return ret;
}

/*
 * The slots of a frame in the common form (src/unwind/table/common.rs):
 * @out[1] the return address at @cfa - 8 and, if @fp_slot, @out[0] the
 * caller's FP at @cfa - 8 * @fp_slot (2 to 15), in one user access
 * section, without faulting: 0 or -EFAULT.
 */
int unwind_rs_read_cfa_slots_nofault(unsigned long cfa, unsigned int fp_slot,
				     unsigned long *out)
{
	unsigned long lo = cfa - 8 * (fp_slot ?: 1);

	if (fp_slot > 15 || cfa < 8 * 16)
		return -EFAULT;
	pagefault_disable();
	if (!user_read_access_begin((void __user *)lo, cfa - lo))
		goto fail;
	unsafe_get_user(out[1], (unsigned long __user *)(cfa - 8), fault);
	if (fp_slot)
		unsafe_get_user(out[0], (unsigned long __user *)lo, fault);
	user_read_access_end();
	pagefault_enable();
	return 0;
fault:
	user_read_access_end();
fail:
	pagefault_enable();
	return -EFAULT;
}

/*
 * A later frame's slots, @len bytes at @p, in a user access section that
 * is already open: whether they are user memory, and in @masked their
 * address masked (mask_user_address(): cmp and cmov, no fence).  The
 * section's barrier_nospec() covered only the first frame; every later
 * frame's address comes from user memory, so a mispredicted check must
 * not let a dependent load read the kernel speculatively (Spectre v1).
 * Every access_ok() of the loops below is this one
 * (tests/host/test_nospec.py).
 */
static __always_inline bool unwind_rs_user_slots(unsigned long p, unsigned long len,
						 unsigned long *masked)
{
	if (!access_ok((void __user *)p, len))
		return false;
	*masked = (unsigned long)mask_user_address((const void __user *)p);
	return true;
}

/*
 * The memo's row for @pc in the common form into @c: false if the memo
 * does not hold it in that form, or holds the outermost frame's (@w->done).
 * A topmost frame's (@topmost, @pc its IP) is looked for in the topmost
 * slot and the span (@w->spanned) first, where Memo::remember() keeps
 * topmost rows, and is walk.rs's where an entry starts at @pc (its rules
 * may be another entry's end: Memo::topmost_row()).
 */
static __always_inline bool unwind_rs_memo_row(struct unwind_rs_memo_run *w,
					       unsigned long pc, bool topmost,
					       struct unwind_rs_common *c)
{
	const struct unwind_rs_row_slot *r;

	if (topmost && w->top->pc != pc && unwind_rs_span_inside(w->span, pc)) {
		w->spanned = true;
		return unwind_rs_common_unpack(w->span->row.common, c);
	}
	r = topmost && w->top->pc == pc ? w->top : &w->rows[unwind_rs_row_find(w->rows, pc)];
	if (r->pc != pc || !pc)
		return false;
	if (topmost && (r->flags & UNWIND_RS_SLOT_STARTS))
		return false;
	if (r->flags & UNWIND_RS_SLOT_OUTERMOST) {
		w->done = true;
		return false;
	}
	return unwind_rs_common_unpack(r->common, c);
}

/*
 * Table steps of a 64-bit user stack in one user access section, for as
 * long as the memo holds each frame's row (that of its return address
 * minus one) in the common form: walk.rs's common_step() for each, with
 * table::step()'s checks (the CFA must not overflow, must be above SP and
 * 8-byte aligned).  A frame that returns to the same address as the one
 * before (recursion) reuses the row.  Never faults.  Stops with the state
 * at the first frame whose row the memo does not hold in that form, whose
 * CFA fails a check or whose slots are not present, at the outermost frame
 * (@w->done), or when @w->max entries are written; walk.rs goes on from
 * there.  From the topmost frame (@w->topmost) too, with its own row: one
 * section for the whole walk of a remembered stack.  The memo's slots are
 * the walking task's own: nothing else writes them meanwhile.
 */
void unwind_rs_memo_run(struct unwind_rs_memo_run *w)
{
	unsigned long ip = w->ip, sp = w->sp, fp = w->fp, cfa, lo, ra, b;
	unsigned long *out = w->entries + w->nr, *end = w->entries + w->max;
	unsigned long *seg;
	unsigned int eh = 0;
	/*
	 * A frame returning to @again looks up the same PC as this one: its
	 * row stays (recursion).  The topmost frame's PC is its IP.
	 */
	unsigned long again = w->topmost ? ip + 1 : ip;
	struct unwind_rs_common c;

	if (out >= end || !unwind_rs_memo_row(w, again - 1, w->topmost, &c))
		goto out;
	cfa = unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp);
	if (!cfa)
		goto out;
	/*
	 * The first frame's slots open the section; later ones are checked
	 * and masked.  @lo is the lowest slot's address: the return address
	 * is at @lo + @c.span - 8, the caller's FP at @lo.
	 */
	lo = cfa - c.span;
	pagefault_disable();
	if (!user_read_access_begin((void __user *)lo, c.span)) {
		pagefault_enable();
		goto out;
	}
	for (;;) {
		/* The frames of one row. */
		seg = out;
		for (;;) {
			unsafe_get_user(ra, (unsigned long __user *)(lo + c.span - 8), fault);
			if (c.fp_slot) {
				unsafe_get_user(b, (unsigned long __user *)lo, fault);
				fp = b;
			}
			sp = cfa;
			ip = ra;
			*out++ = ra;
			if (out == end || ra != again)
				break;
			cfa = unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp);
			if (!cfa || !unwind_rs_user_slots(cfa - c.span, c.span, &lo))
				goto stop;
		}
		if (c.eh)
			eh += out - seg;
		again = ip;
		if (out == end || !unwind_rs_memo_row(w, ip - 1, false, &c))
			break;
		cfa = unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp);
		if (!cfa || !unwind_rs_user_slots(cfa - c.span, c.span, &lo))
			break;
	}
	goto done;
fault:	/* The state stays at the last frame stepped. */
stop:
	if (c.eh)
		eh += out - seg;
done:
	user_read_access_end();
	pagefault_enable();
out:
	w->ip = ip;
	w->sp = sp;
	w->fp = fp;
	w->eh = eh;
	w->nr = out - w->entries;
}

/*
 * Frame-pointer steps of a 64-bit user stack in one user access section,
 * for as long as the IPs stay in [lo, hi) (a mapping without SFrame data,
 * src/unwind/walk.rs decides).  The steps are walk.rs's step_fp(), written
 * here because a user access section cannot span calls into Rust: the
 * per-frame helper call, access_ok() and pagefault toggle it saves are most
 * of a frame's cost.  Never faults: on a page that is not present it stops
 * with -EFAULT and the state at that frame, for walk.rs to fault it in.
 * Returns 0 when the IP left the range or @w->max entries are written, 1
 * at the end of the chain (a frame that does not look right).
 */
int unwind_rs_fp_frames(struct unwind_rs_fp_walk *w)
{
	unsigned long lo = w->lo, span = w->hi - w->lo, a = w->fp, b, ra;
	unsigned long *out = w->entries + w->nr, *end = w->entries + w->max;
	unsigned long *last = end - 1;
	int ret;

	if (w->nr >= w->max)
		return 0;
	/*
	 * A frame below the stack pointer (0 included), outside user memory
	 * or not aligned ends the chain: checked for this frame here (user
	 * memory by user_read_access_begin()), for each caller's before the
	 * loop moves on to it.
	 */
	if (a < w->sp || (a & 7))
		return 1;
	pagefault_disable();
	if (!user_read_access_begin((void __user *)a, 16)) {
		pagefault_enable();
		return 1;
	}
	/*
	 * Two frames per iteration, the frame addresses alternating between
	 * a and b, so that nothing moves between frames; each exit sets the
	 * state from the registers it has.  The IP range is one unsigned
	 * compare (ra - 1 outside [lo, lo + span)).
	 */
	for (;;) {
		/* Keeps the compiler from deriving more counters from it. */
		OPTIMIZER_HIDE_VAR(out);
		unsafe_get_user(b, (unsigned long __user *)a, fault_a);
		unsafe_get_user(ra, (unsigned long __user *)(a + 8), fault_a);
		out[0] = ra;
		if (ra - 1 - lo >= span || out == last ||
		    b < a + 16 || (b & 7) || !unwind_rs_user_slots(b, 16, &b)) {
			out++;
			goto at_b;
		}
		unsafe_get_user(a, (unsigned long __user *)b, fault_b1);
		unsafe_get_user(ra, (unsigned long __user *)(b + 8), fault_b1);
		out[1] = ra;
		out += 2;
		if (ra - 1 - lo >= span || out == end ||
		    a < b + 16 || (a & 7) || !unwind_rs_user_slots(a, 16, &a))
			goto at_a;
	}
at_b:	/* The state is b's frame, the caller's of the last step. */
	w->sp = a + 16;
	w->fp = b;
	goto done;
at_a:
	w->sp = b + 16;
	w->fp = a;
done:
	/*
	 * Which test ended the loop is decided once, here: the IP left the
	 * range or the entries are full (0), else the next frame does not
	 * look like one (1).  Hidden, or the compiler keeps a flag for it in
	 * the loop.
	 */
	OPTIMIZER_HIDE_VAR(ra);
	ret = ra - 1 - lo >= span || out == end ? 0 : 1;
	w->ip = ra;
	user_read_access_end();
	pagefault_enable();
	w->nr = out - w->entries;
	return ret;
fault_b1:
	out++;
	a = b;
fault_a:
	/*
	 * The state stays at the frame whose page is not present, for the
	 * caller to fault it in.  Its stack pointer becomes the frame's own
	 * address: the frame-pointer step only checks that the frame is not
	 * below it, and this loop checked that it is above its callee's.
	 */
	user_read_access_end();
	pagefault_enable();
	if (out != w->entries + w->nr) {
		w->ip = out[-1];
		w->sp = a;
	}
	w->fp = a;
	w->nr = out - w->entries;
	return -EFAULT;
}

/* One 8-byte user word at @addr (an SFrame rule's load), without faulting. */
int unwind_rs_read_word_nofault(unsigned long addr, unsigned long *out)
{
	unsigned long __user *p = (unsigned long __user *)addr;
	int ret;

	if (!access_ok(p, sizeof(*p)))
		return -EFAULT;
	pagefault_disable();
	ret = __get_user(*out, p);
	pagefault_enable();
	return ret;
}
