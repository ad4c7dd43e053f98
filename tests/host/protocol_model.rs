// SPDX-License-Identifier: GPL-2.0

//! A model of one task running the module's request protocol
//! (`src/deferred/protocol.rs`, compiled in as is) through a few kernel entries,
//! with up to two interrupts injected at every pair of step points:
//! NMIs anywhere, IRQs where interrupts are on (inside `process()`), an
//! NMI inside such an IRQ.  Each run checks the protocol's guarantee.
//!
//! Built and run by `tests/host/run` with `rustc --test`.

#![allow(dead_code)]

#[path = "../../src/deferred/protocol.rs"]
mod protocol;

use protocol::{Request, Step, Task, COOKIE_VALID, PENDING, RESERVED_MASK};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What an injected interrupt does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// An NMI requests for work `w`.
    NmiRequest(u32),
    /// An NMI asks for the cookie.
    NmiCookie,
    /// An IRQ requests for work `w` (only where interrupts are on).
    IrqRequest(u32),
    /// A perf sample in an NMI: perf's request over its works.
    NmiPerf,
}

const ACTIONS: [Action; 6] = [
    Action::NmiRequest(2),
    Action::NmiRequest(3),
    Action::NmiCookie,
    Action::IrqRequest(2),
    Action::IrqRequest(4),
    Action::NmiPerf,
];

/// perf's works (`src/glue/perf.rs`).
const PERF_WORKS: [u32; 3] = [5, 6, 7];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    Task,
    Irq,
    Nmi,
}

/// The protocol functions under test (the module's, or a control).
#[derive(Clone, Copy)]
struct Protocol {
    request: fn(&Sim, u32) -> Request,
    get_cookie: fn(&Sim, bool) -> (u64, bool),
    exit_reset: fn(&Sim) -> bool,
    /// Requests from task context with interrupts off force a re-entry.
    irqs_off_prompt: bool,
    /// perf asks its next work when one is taken (else it takes the
    /// cookie, as upstream does).
    perf_next_work: bool,
}

const MODULE: Protocol = Protocol {
    request: protocol::request::<Sim>,
    get_cookie: protocol::get_cookie::<Sim>,
    exit_reset: protocol::exit_reset::<Sim>,
    irqs_off_prompt: true,
    perf_next_work: true,
};

/// A cookie handed out, and the user state (trace) of its entry.
#[derive(Debug)]
struct Handed {
    work: Option<u32>,
    cookie: u64,
    trace: u32,
    what: String,
}

struct Sim {
    proto: Protocol,
    mask: AtomicUsize,
    cookie: AtomicU64,
    next_cookie: Cell<u64>,
    plan: RefCell<Vec<(usize, Action)>>,
    steps: Cell<usize>,
    level: Cell<Level>,
    irqs_off: Cell<bool>,
    /// The user state the task would resume: what a walk returns.
    user: Cell<u32>,
    /// The task work is queued; `prompt` if an IRQ work forces a re-entry
    /// before user code runs (`TWA_NMI_CURRENT`).
    queued: Cell<bool>,
    prompt: Cell<bool>,
    cache: Cell<Option<u32>>,
    completed: AtomicUsize,
    handed: RefCell<Vec<Handed>>,
    callbacks: RefCell<Vec<(u32, u64, u32)>>,
    /// The batches `process_begin()` took: (bits, cookie).
    begun: RefCell<Vec<(usize, u64)>>,
    /// Events in order: what perf was handed and the callbacks, stamped.
    seq: Cell<u64>,
    /// Cookies handed to perf: (cookie, stamp, what).
    perf_handed: RefCell<Vec<(u64, u64, String)>>,
    /// Callbacks of perf's works: (cookie, stamp).
    perf_callbacks: RefCell<Vec<(u64, u64)>>,
    errors: RefCell<Vec<String>>,
    seen: RefCell<Vec<Step>>,
}

impl Task for Sim {
    fn mask(&self) -> &AtomicUsize {
        &self.mask
    }
    fn cookie(&self) -> &AtomicU64 {
        &self.cookie
    }
    fn new_cookie(&self) -> u64 {
        let c = self.next_cookie.get() + 1;
        self.next_cookie.set(c);
        c
    }
    fn step(&self, s: Step) {
        if !self.seen.borrow().contains(&s) {
            self.seen.borrow_mut().push(s);
        }
        if s == Step::PendingCleared {
            // The batch is what `PENDING` was cleared with.
            let m = self.mask.load(Ordering::Acquire);
            self.begun
                .borrow_mut()
                .push((m & !RESERVED_MASK, self.cookie.load(Ordering::Acquire)));
        }
        if self.level.get() == Level::Nmi {
            return;
        }
        let idx = self.steps.get();
        self.steps.set(idx + 1);
        let now: Vec<Action> = self
            .plan
            .borrow()
            .iter()
            .filter(|(i, _)| *i == idx)
            .map(|(_, a)| *a)
            .collect();
        for a in now {
            self.interrupt(a, s);
        }
    }
}

impl Sim {
    fn new(proto: Protocol, plan: Vec<(usize, Action)>) -> Self {
        Sim {
            proto,
            mask: AtomicUsize::new(0),
            cookie: AtomicU64::new(0),
            next_cookie: Cell::new(0x100),
            plan: RefCell::new(plan),
            steps: Cell::new(0),
            level: Cell::new(Level::Task),
            irqs_off: Cell::new(false),
            user: Cell::new(1),
            queued: Cell::new(false),
            prompt: Cell::new(false),
            cache: Cell::new(None),
            completed: AtomicUsize::new(0),
            handed: RefCell::new(Vec::new()),
            callbacks: RefCell::new(Vec::new()),
            begun: RefCell::new(Vec::new()),
            seq: Cell::new(0),
            perf_handed: RefCell::new(Vec::new()),
            perf_callbacks: RefCell::new(Vec::new()),
            errors: RefCell::new(Vec::new()),
            seen: RefCell::new(Vec::new()),
        }
    }

    fn error(&self, e: String) {
        self.errors.borrow_mut().push(e);
    }

    /// `task_work_add()`: NMIs and interrupts-off task context force a
    /// prompt re-entry, as the module does.
    fn queue(&self, prompt: bool) {
        if self.queued.get() {
            self.error("task work queued twice (list corruption)".into());
        }
        self.queued.set(true);
        self.prompt.set(self.prompt.get() || prompt);
    }

    /// The module's `request()` around the protocol's.
    fn request(&self, w: u32, what: &str) {
        let prompt = self.level.get() == Level::Nmi
            || (self.proto.irqs_off_prompt
                && self.level.get() == Level::Task
                && self.irqs_off.get());
        let r = (self.proto.request)(self, w);
        if r.cookie == 0 {
            self.error(format!("{what}: request for w{w} returned cookie 0"));
        }
        // `taken`: this entry's batch with the work was taken already.
        if r.taken
            && !self
                .begun
                .borrow()
                .iter()
                .any(|&(bits, c)| c == r.cookie && bits & 1 << w != 0)
        {
            self.error(format!("{what}: w{w} taken before its batch was"));
        }
        self.handed.borrow_mut().push(Handed {
            work: Some(w),
            cookie: r.cookie,
            trace: self.user.get(),
            what: what.into(),
        });
        if r.queue {
            self.queue(prompt);
        }
    }

    fn stamp(&self) -> u64 {
        self.seq.set(self.seq.get() + 1);
        self.seq.get()
    }

    /// perf's request (`src/glue/perf.rs` over `deferred::request()`):
    /// the next work while one is taken (its batch taken, or its callback
    /// done); after the last, a synchronous walk (nothing handed).
    fn perf_request(&self, what: &str) {
        let prompt = self.level.get() == Level::Nmi
            || (self.proto.irqs_off_prompt
                && self.level.get() == Level::Task
                && self.irqs_off.get());
        for w in PERF_WORKS {
            let r = (self.proto.request)(self, w);
            if r.queue {
                self.queue(prompt);
            }
            let done = self.completed.load(Ordering::Acquire) & 1 << w != 0;
            if self.proto.perf_next_work && (r.taken || (r.already && done)) {
                continue;
            }
            self.handed.borrow_mut().push(Handed {
                work: Some(w),
                cookie: r.cookie,
                trace: self.user.get(),
                what: what.into(),
            });
            let s = self.stamp();
            self.perf_handed
                .borrow_mut()
                .push((r.cookie, s, format!("{what} (w{w})")));
            return;
        }
    }

    /// The module's `get_cookie()` around the protocol's.
    fn get_cookie(&self, what: &str) {
        let force = self.level.get() == Level::Nmi || self.irqs_off.get();
        let (c, must_queue) = (self.proto.get_cookie)(self, force);
        if c == 0 {
            self.error(format!("{what}: cookie 0"));
        }
        self.handed.borrow_mut().push(Handed {
            work: None,
            cookie: c,
            trace: self.user.get(),
            what: what.into(),
        });
        if must_queue {
            self.queue(true);
        }
    }

    fn interrupt(&self, a: Action, s: Step) {
        let (level, irqs_off) = (self.level.get(), self.irqs_off.get());
        let what = format!("{a:?} at {s:?}");
        match a {
            Action::NmiRequest(w) => {
                self.level.set(Level::Nmi);
                self.request(w, &what);
            }
            Action::NmiCookie => {
                self.level.set(Level::Nmi);
                self.get_cookie(&what);
            }
            Action::IrqRequest(w) => {
                if irqs_off || level != Level::Task {
                    return;
                }
                self.level.set(Level::Irq);
                self.irqs_off.set(true);
                self.request(w, &what);
            }
            Action::NmiPerf => {
                self.level.set(Level::Nmi);
                self.perf_request(&what);
            }
        }
        self.level.set(level);
        self.irqs_off.set(irqs_off);
    }

    /// The module's `process()`: the task work.
    fn process(&self) {
        let Some(batch) = protocol::process_begin(self) else {
            return;
        };
        if batch.bits != 0 && self.cache.get().is_none() {
            // The walk: the user state the task returns to.
            self.cache.set(Some(self.user.get()));
        }
        let trace = self.cache.get().unwrap_or(0);
        protocol::process_deliver(self, batch, &self.completed, |bit, cookie| {
            self.callbacks.borrow_mut().push((bit, cookie, trace));
            if PERF_WORKS.contains(&bit) {
                let s = self.stamp();
                self.perf_callbacks.borrow_mut().push((cookie, s));
            }
            true
        });
    }

    /// The return to user space: the work loop, then the reset with
    /// interrupts off; a prompt task work re-enters before user code runs.
    fn exit_to_user(&self) {
        self.exit_to_user_with(|| {});
    }

    /// As `exit_to_user()`, with `late` run after the work loop, with
    /// interrupts off (a tracepoint on the way out).
    fn exit_to_user_with(&self, late: impl Fn()) {
        let mut late = Some(late);
        loop {
            while self.queued.get() {
                self.queued.set(false);
                self.prompt.set(false);
                self.process();
            }
            self.irqs_off.set(true);
            if let Some(f) = late.take() {
                f();
            }
            if self.mask.load(Ordering::Acquire) != 0 && (self.proto.exit_reset)(self) {
                self.cache.set(None);
                self.completed.store(0, Ordering::Release);
            }
            self.irqs_off.set(false);
            if !(self.queued.get() && self.prompt.get()) {
                break;
            }
            // The IRQ work's interrupt hits before any user instruction.
        }
        // User code runs: the user state changes.
        self.user.set(self.user.get() + 1);
    }

    /// A few kernel entries of one task.
    fn scenario(&self) {
        // A syscall that requests for work 2 and asks for the cookie.
        self.request(2, "task request w2 (entry 1)");
        self.get_cookie("task get_cookie (entry 1)");
        self.exit_to_user();
        // A syscall that requests for work 3 twice, once with interrupts off.
        self.request(3, "task request w3 (entry 2)");
        self.irqs_off.set(true);
        self.request(3, "irqs-off request w3 (entry 2)");
        self.irqs_off.set(false);
        self.exit_to_user();
        // A syscall that requests nothing, then one that requests late, with
        // interrupts off after the work loop (a tracepoint).
        self.exit_to_user();
        self.late_request();
        // A perf sample in a syscall, then a late request of another work
        // after the work loop: a perf sample then sees `PENDING` again,
        // with its work's record written.
        self.perf_request("task perf (entry 5)");
        self.exit_to_user_with(|| self.request(4, "late irqs-off request w4 (entry 5)"));
        // One more entry to flush anything left queued.
        self.exit_to_user();
        self.exit_to_user();
    }

    /// An entry whose only request comes after the work loop.
    fn late_request(&self) {
        self.exit_to_user_with(|| self.request(4, "late irqs-off request w4"));
    }

    /// The protocol's guarantee over everything handed out and called back.
    fn check(&self) {
        let handed = self.handed.borrow();
        let callbacks = self.callbacks.borrow();
        let mut want: BTreeMap<(u32, u64), &Handed> = BTreeMap::new();
        let mut trace_of: BTreeMap<u64, &Handed> = BTreeMap::new();
        for h in handed.iter() {
            if let Some(prev) = trace_of.get(&h.cookie) {
                if prev.trace != h.trace {
                    self.error(format!(
                        "cookie {:#x} handed out in two entries: {} and {}",
                        h.cookie, prev.what, h.what
                    ));
                }
            }
            trace_of.entry(h.cookie).or_insert(h);
            if let Some(w) = h.work {
                want.entry((w, h.cookie)).or_insert(h);
            }
        }
        let mut got: BTreeMap<(u32, u64), usize> = BTreeMap::new();
        for &(w, c, t) in callbacks.iter() {
            if c == 0 {
                self.error(format!("callback for w{w} with cookie 0"));
                continue;
            }
            *got.entry((w, c)).or_default() += 1;
            match want.get(&(w, c)) {
                None => self.error(format!("unrequested callback w{w} cookie {c:#x}")),
                Some(h) if h.trace != t => self.error(format!(
                    "w{w} cookie {c:#x}: trace of entry {t}, handed out in entry {} ({})",
                    h.trace, h.what
                )),
                _ => {}
            }
        }
        for (&(w, c), h) in want.iter() {
            let n = got.get(&(w, c)).copied().unwrap_or(0);
            if n != 1 {
                self.error(format!("w{w} cookie {c:#x} ({}): {n} callbacks", h.what));
            }
        }
        if self.queued.get() || self.mask.load(Ordering::Acquire) & PENDING != 0 {
            self.error("work still queued at the end".into());
        }
        // perf's samples all merge: a record of each handed cookie comes
        // after the sample.
        for (c, s, what) in self.perf_handed.borrow().iter() {
            if !self
                .perf_callbacks
                .borrow()
                .iter()
                .any(|&(cc, cs)| cc == *c && cs > *s)
            {
                self.error(format!("{what}: cookie {c:#x} has no record after it"));
            }
        }
    }
}

/// Runs the scenario with `plan`; returns the step count and the errors.
fn run(proto: Protocol, plan: Vec<(usize, Action)>) -> (usize, Vec<String>) {
    let sim = Sim::new(proto, plan);
    sim.scenario();
    sim.check();
    let errors = sim.errors.borrow().clone();
    (sim.steps.get(), errors)
}

/// Every plan of up to two interrupts: returns (runs, failing runs with
/// their first error).
fn explore(proto: Protocol) -> (usize, Vec<String>) {
    let mut runs = 0;
    let mut failures = Vec::new();
    let mut record = |plan: &Vec<(usize, Action)>, errors: Vec<String>| {
        if let Some(e) = errors.first() {
            failures.push(format!("{plan:?}: {e}"));
        }
    };
    let (n0, e0) = run(proto, vec![]);
    runs += 1;
    record(&vec![], e0);
    for i in 0..n0 {
        for &a in ACTIONS.iter() {
            let plan = vec![(i, a)];
            let (n1, e1) = run(proto, plan.clone());
            runs += 1;
            record(&plan, e1);
            for j in i..n1 {
                for &b in ACTIONS.iter() {
                    let plan = vec![(i, a), (j, b)];
                    let (_, e2) = run(proto, plan.clone());
                    runs += 1;
                    record(&plan, e2);
                }
            }
        }
    }
    (runs, failures)
}

#[test]
fn no_interrupts() {
    let (steps, errors) = run(MODULE, vec![]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(steps > 20, "only {steps} steps");
}

#[test]
fn every_interleaving_of_two_interrupts() {
    let (runs, failures) = explore(MODULE);
    assert!(runs > 10_000, "only {runs} runs");
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    eprintln!("{runs} interleavings explored");
}

/// The scenarios reach every step point of the protocol.
#[test]
fn every_step_is_reached() {
    let mut seen: Vec<Step> = Vec::new();
    let (n, _) = run(MODULE, vec![]);
    for i in 0..n {
        for &a in ACTIONS.iter() {
            let sim = Sim::new(MODULE, vec![(i, a)]);
            sim.scenario();
            for s in sim.seen.borrow().iter() {
                if !seen.contains(s) {
                    seen.push(*s);
                }
            }
        }
    }
    for s in protocol::STEPS {
        assert!(seen.contains(&s), "{s:?} never reached");
    }
}

// Controls: the checker must catch the defects the protocol fixes, and
// only under interrupts.

/// The exit reset as it was: the cookie to 0 first, then the mask.
fn old_exit_reset(t: &Sim) -> bool {
    let m = t.mask.load(Ordering::Acquire);
    if m == 0 || m & PENDING != 0 {
        return false;
    }
    t.cookie.store(0, Ordering::Relaxed);
    t.step(Step::ResetRead);
    t.mask
        .compare_exchange(m, 0, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// The cookie as it was: installed over 0, whatever the mask says.
fn old_cookie(t: &Sim) -> u64 {
    let c = t.cookie.load(Ordering::Relaxed);
    t.step(Step::CookieRead);
    if c != 0 {
        return c;
    }
    let new = t.new_cookie();
    match t
        .cookie
        .compare_exchange(0, new, Ordering::Relaxed, Ordering::Relaxed)
    {
        Ok(_) => new,
        Err(cur) => cur,
    }
}

/// The request as it was (its `UNWIND_USED` is today's `COOKIE_VALID`).
fn old_request(t: &Sim, bit: u32) -> Request {
    let b = 1usize << bit;
    let c = old_cookie(t);
    t.step(Step::MaskRead);
    let old = t
        .mask
        .fetch_or(COOKIE_VALID | PENDING | b, Ordering::AcqRel);
    t.step(Step::MaskSet);
    Request {
        cookie: c,
        already: old & b != 0,
        taken: false,
        queue: old & PENDING == 0,
        undo: 0,
    }
}

fn old_get_cookie(t: &Sim, _force: bool) -> (u64, bool) {
    let c = old_cookie(t);
    t.mask.fetch_or(COOKIE_VALID, Ordering::AcqRel);
    t.step(Step::MaskSet);
    (c, false)
}

/// Explores `p`, which must be right without interrupts and wrong with.
fn caught(p: Protocol) -> (usize, Vec<String>) {
    let (_, errors) = run(p, vec![]);
    assert!(errors.is_empty(), "without interrupts: {errors:?}");
    let (runs, failures) = explore(p);
    assert!(!failures.is_empty(), "{runs} runs, no failure found");
    (runs, failures)
}

#[test]
fn control_old_protocol_is_caught() {
    let (runs, failures) = caught(Protocol {
        request: old_request,
        get_cookie: old_get_cookie,
        exit_reset: old_exit_reset,
        irqs_off_prompt: true,
        perf_next_work: true,
    });
    eprintln!(
        "old protocol: {} of {runs} runs fail, e.g. {}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn control_reset_writing_the_cookie_is_caught() {
    caught(Protocol {
        exit_reset: |t| {
            let reset = protocol::exit_reset(t);
            if reset {
                t.cookie.store(0, Ordering::Relaxed);
            }
            reset
        },
        ..MODULE
    });
}

#[test]
fn control_get_cookie_without_reentry_is_caught() {
    caught(Protocol {
        get_cookie: |t, _| protocol::get_cookie(t, false),
        ..MODULE
    });
}

#[test]
fn control_cookie_stored_without_cas_is_caught() {
    caught(Protocol {
        request: |t, bit| {
            let m = t.mask.load(Ordering::Acquire);
            t.step(Step::MaskRead);
            if m & COOKIE_VALID == 0 {
                t.cookie.store(t.new_cookie(), Ordering::Release);
                t.step(Step::CookieInstalled);
            }
            protocol::request(t, bit)
        },
        ..MODULE
    });
}

#[test]
fn control_late_request_without_reentry_is_caught() {
    // Wrong even without interrupts: the work runs after user code did.
    let (_, errors) = run(
        Protocol {
            irqs_off_prompt: false,
            ..MODULE
        },
        vec![],
    );
    assert!(
        errors.iter().any(|e| e.contains("trace of entry")),
        "{errors:?}"
    );
}

/// What a module unloaded with a task work in flight leaves in the mask
/// (`PENDING`, maybe old work bits, no `COOKIE_VALID`) calls nothing when a
/// reloaded module's task work runs, and the next request starts afresh.
#[test]
fn leftover_of_an_unloaded_module_calls_nothing() {
    for leftover in [PENDING, PENDING | 1 << 5 | 1 << 9] {
        let sim = Sim::new(MODULE, vec![]);
        sim.mask.store(leftover, Ordering::Relaxed);
        sim.cookie.store(0x55, Ordering::Relaxed);
        let batch = protocol::process_begin(&sim).expect("PENDING was set");
        assert_eq!(batch.bits, 0, "leftover {leftover:#x}");
        let mut called = 0;
        protocol::process_deliver(&sim, batch, &sim.completed, |_, _| {
            called += 1;
            true
        });
        assert_eq!(called, 0);
        let r = protocol::request(&sim, 5);
        assert!(
            r.cookie != 0x55 && r.cookie != 0,
            "stale cookie {:#x}",
            r.cookie
        );
        assert!(!r.already && r.queue);
    }
}

/// Without the next work, a perf sample after its entry's record keeps a
/// cookie whose record is behind it (upstream's unmerged sample): the
/// model finds it, so the perf property above is tested.
#[test]
fn perf_without_the_next_work_leaves_samples_unmerged() {
    let (_, failures) = explore(Protocol {
        perf_next_work: false,
        ..MODULE
    });
    assert!(
        failures.iter().any(|e| e.contains("no record after it")),
        "{failures:?}"
    );
}

/// `taken` only once the work's batch was taken: a request while it is
/// pending is not, one after its callback is, and a new entry starts over.
#[test]
fn taken_after_the_batch_only() {
    let sim = Sim::new(MODULE, vec![]);
    let r = protocol::request(&sim, 3);
    assert!(!r.already && !r.taken && r.queue);
    let r2 = protocol::request(&sim, 3);
    assert!(r2.already && !r2.taken && r2.cookie == r.cookie);
    let batch = protocol::process_begin(&sim).expect("pending");
    let r3 = protocol::request(&sim, 3);
    assert!(r3.already && r3.taken && r3.cookie == r.cookie);
    protocol::process_deliver(&sim, batch, &sim.completed, |_, _| true);
    assert!(protocol::request(&sim, 3).taken);
    assert!(protocol::exit_reset(&sim));
    let r4 = protocol::request(&sim, 3);
    assert!(!r4.already && !r4.taken && r4.cookie != r.cookie);
}

/// A bit cancelled after `process_begin()` read it is not called back.
#[test]
fn bit_cleared_after_begin_is_skipped() {
    let sim = Sim::new(MODULE, vec![]);
    let r = protocol::request(&sim, 7);
    assert!(r.queue);
    let batch = protocol::process_begin(&sim).expect("pending");
    assert_eq!(batch.bits, 1 << 7);
    // cancel() on another CPU clears the bit, then a new work may get it.
    sim.mask.fetch_and(!(1 << 7), Ordering::AcqRel);
    let mut called = 0;
    protocol::process_deliver(&sim, batch, &sim.completed, |_, _| {
        called += 1;
        true
    });
    assert_eq!(called, 0);
}
