// SPDX-License-Identifier: GPL-2.0
/*
 * The system side of the unwind tables (src/unwind/table_find.rs,
 * table_read.rs, table_cache.rs): where a walk starts and whether it may
 * use tables, which mapping and file holds an IP, a file version's
 * identity and its bytes (from the page cache), the version of an
 * address space's mappings, and the table cache's lock and size.
 */
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>

#include "../sys/sys.h"
#include "unwind.h"


/* One cap, two names: sframe_cache_kb is the name before .eh_frame. */
static unsigned int table_cache_kb = 4096;
module_param(table_cache_kb, uint, 0644);
MODULE_PARM_DESC(table_cache_kb,
		 "memory for compiled unwind tables in KiB (0: frame pointers only)");
module_param_named(sframe_cache_kb, table_cache_kb, uint, 0644);
MODULE_PARM_DESC(sframe_cache_kb, "old name of table_cache_kb");

unsigned int unwind_rs_table_cache_kb(void)
{
	return READ_ONCE(table_cache_kb);
}

/*
 * Larger .eh_frame is looked up one function at a time (table_fns.rs);
 * 0, the default: every .eh_frame with a header.
 */
static unsigned int table_compile_kb;
module_param(table_compile_kb, uint, 0644);
MODULE_PARM_DESC(table_compile_kb,
		 "largest .eh_frame compiled whole in KiB; larger ones are read one function at a time (default 0: all)");

unsigned int unwind_rs_table_compile_kb(void)
{
	return READ_ONCE(table_compile_kb);
}

/*
 * SFrame is compiled whole; a larger section is left for the file's
 * .eh_frame, looked up one function at a time (compiled only if the file
 * has no usable .eh_frame).
 */
static unsigned int sframe_compile_kb = 1024;
module_param(sframe_compile_kb, uint, 0644);
MODULE_PARM_DESC(sframe_compile_kb,
		 "largest SFrame section compiled in KiB; a larger one is left for .eh_frame, by function, if the file has a usable one (default 1024)");

unsigned int unwind_rs_sframe_compile_kb(void)
{
	return READ_ONCE(sframe_compile_kb);
}

/*
 * Everything a walk of current's user stack starts from, in one call
 * (each would be a call of its own from Rust): false without user
 * registers (@c untouched).  Tables need the cache on, and faults
 * allowed or a context that may sleep (then cached tables only); the
 * memo's key only matters then.
 */
bool unwind_rs_walk_ctx(struct unwind_rs_walk_ctx *c)
{
	struct pt_regs *regs = unwind_rs_user_regs();

	if (!regs)
		return false;
	c->task = current;
	c->ip = regs->ip;
	c->sp = regs->sp;
	c->bp = regs->bp;
	c->cs = regs->cs;
	c->ss = regs->ss;
	c->compat = !user_64bit_mode(regs);
	c->can_fault = unwind_rs_can_fault();
	/*
	 * Without faults (exec, exit, a dying task's work) a walk that may
	 * still sleep uses the tables already cached: it reads no file, and
	 * takes the locks it needs only if they are free.
	 */
	c->cached_only = !c->can_fault && unwind_rs_may_sleep();
	c->tables = (c->can_fault || c->cached_only) && unwind_rs_table_cache_kb();
	c->key_valid = c->tables && unwind_rs_mm_key(&c->key);
	return true;
}

/*
 * Asked between pieces of a whole-file compile (table_read.rs), which a
 * crafted file can make take seconds: lets other tasks run, and says
 * stop once current is being killed.  Both are inline.
 */
bool unwind_rs_table_read_keep_going(void)
{
	cond_resched();
	return !fatal_signal_pending(current);
}

/* The cache's lock: a mutex, as misses read files with it dropped. */
static DEFINE_MUTEX(unwind_rs_table_cache_mutex);

void unwind_rs_table_cache_lock(void)
{
	mutex_lock(&unwind_rs_table_cache_mutex);
}

/* The cache's lock if it is free (a walk that must not wait). */
bool unwind_rs_table_cache_trylock(void)
{
	return mutex_trylock(&unwind_rs_table_cache_mutex);
}

void unwind_rs_table_cache_unlock(void)
{
	mutex_unlock(&unwind_rs_table_cache_mutex);
}

/*
 * Held while a file's tables are read (table_read.rs), so that tasks
 * that miss the same file at once read it once: the others wait, then
 * find it cached.  One for all files: with the defaults a read is a
 * header or a section of at most sframe_compile_kb, and a task being
 * killed stops waiting.
 */
static DEFINE_MUTEX(unwind_rs_table_read_mutex);

bool unwind_rs_table_read_lock(void)
{
	return !mutex_lock_killable(&unwind_rs_table_read_mutex);
}

void unwind_rs_table_read_unlock(void)
{
	mutex_unlock(&unwind_rs_table_read_mutex);
}

/*
 * The VMA of current that holds @ip: its range and page offset in @v, and
 * a reference to its file if it is an executable mapping of a regular
 * file (the caller fput()s it).  NULL with an empty range when @ip is
 * unmapped, or when @trylock and the lock is taken (a writer may wait
 * behind a fault on a file server).  mmap_read_lock() and vma_lookup()
 * are inline; the lock is held only here, never while user memory or the
 * file is read.
 */
struct file *unwind_rs_vma_file(unsigned long ip, struct unwind_rs_vma *v, bool trylock)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct file *file = NULL;

	v->start = 0;
	v->end = 0;
	v->pgoff = 0;
	if (!mm)
		return NULL;
	if (!trylock)
		mmap_read_lock(mm);
	else if (!mmap_read_trylock(mm))
		return NULL;
	vma = vma_lookup(mm, ip);
	if (vma) {
		v->start = vma->vm_start;
		v->end = vma->vm_end;
		v->pgoff = vma->vm_pgoff;
		/* Regular files only: reading a device has side effects. */
		if (vma->vm_file && (vma->vm_flags & VM_EXEC) &&
		    S_ISREG(file_inode(vma->vm_file)->i_mode))
			file = get_file(vma->vm_file);
	}
	mmap_read_unlock(mm);
	return file;
}

/*
 * What tells one version of a file from any other: the inode (device,
 * number, generation) and what any write or truncation changes (ctime,
 * mtime, size).  file_inode() and the time accessors are inline.
 */
void unwind_rs_file_id(struct file *file, struct unwind_rs_file_id *id)
{
	struct inode *inode = file_inode(file);
	struct timespec64 c = inode_get_ctime(inode);
	struct timespec64 m = inode_get_mtime(inode);

	id->dev = inode->i_sb->s_dev;
	id->ino = inode->i_ino;
	id->size = i_size_read(inode);
	id->ctime_sec = c.tv_sec;
	id->mtime_sec = m.tv_sec;
	id->ctime_nsec = c.tv_nsec;
	id->mtime_nsec = m.tv_nsec;
	id->generation = inode->i_generation;
	id->pad = 0;
}

/*
 * Up to @len bytes of @file at @pos into @buf, from the page cache (pages
 * missing are read in, with readahead), the way uprobes read a probed
 * instruction: not through vfs_read(), so the sampled task's table read
 * updates no atime and raises no fsnotify event (a FAN_ACCESS_PERM
 * listener could otherwise hold it).  Stops at the file's size.  Task
 * context that may sleep (it may read the disk).  Mappings
 * without a page cache to read (DAX, a filesystem with no read_folio and
 * not tmpfs) are read with kernel_read().
 */
ssize_t unwind_rs_file_read(struct file *file, void *buf, size_t len, loff_t pos)
{
	struct address_space *mapping = file->f_mapping;
	bool shmem = shmem_mapping(mapping);
	struct file_ra_state ra;
	size_t done = 0;
	loff_t size;

	if (IS_DAX(mapping->host) || (!mapping->a_ops->read_folio && !shmem))
		return kernel_read(file, buf, len, &pos);
	size = i_size_read(mapping->host);
	if (pos < 0 || pos >= size)
		return 0;
	len = min_t(loff_t, len, size - pos);
	file_ra_state_init(&ra, mapping);
	while (done < len) {
		loff_t at = pos + done;
		pgoff_t index = at >> PAGE_SHIFT;
		struct folio *folio;
		size_t off, n;

		if (shmem) {
			folio = shmem_read_folio_gfp(mapping, index,
						     mapping_gfp_mask(mapping));
		} else {
			folio = filemap_get_folio(mapping, index);
			if (IS_ERR(folio)) {
				page_cache_sync_readahead(mapping, &ra, file, index,
							  DIV_ROUND_UP(pos + len, PAGE_SIZE) - index);
				folio = read_mapping_folio(mapping, index, file);
			} else if (!folio_test_uptodate(folio)) {
				folio_put(folio);
				folio = read_mapping_folio(mapping, index, file);
			}
		}
		if (IS_ERR(folio))
			return done ? done : PTR_ERR(folio);
		off = offset_in_folio(folio, at);
		n = min(len - done, folio_size(folio) - off);
		memcpy_from_folio(buf + done, folio, off, n);
		folio_put(folio);
		done += n;
		/* A whole section is up to 32 MiB: let others run. */
		cond_resched();
	}
	return done;
}

/*
 * current's address space and the version of its mappings, for the memo of
 * mappings the unwinders keep between walks.  mm_lock_seq is odd while
 * mmap_lock is write-locked and moves on at every write unlock, so two
 * equal even values mean no mapping changed in between; self_exec_id
 * tells a new mm at a recycled address (exec) from the old one.  False
 * (no key, no memo) while a writer holds the lock, and without per-VMA
 * locks, which is what maintains the sequence.
 */
bool unwind_rs_mm_key(struct unwind_rs_mm_key *k)
{
#ifdef CONFIG_PER_VMA_LOCK
	struct mm_struct *mm = current->mm;
	unsigned int seq;

	if (!mm)
		return false;
	seq = raw_read_seqcount(&mm->mm_lock_seq);
	if (seq & 1)
		return false;
	k->mm = (unsigned long)mm;
	k->exec_id = current->self_exec_id;
	k->seq = seq;
	k->pad = 0;
	return true;
#else
	return false;
#endif
}
