//! Fork–join over a pool of helper threads: the one way the deterministic
//! crates share a piece of work between threads.
//!
//! [`fork_join`] runs a list of jobs, the first on the calling thread and
//! each other on a helper thread (a single job runs in place, with no
//! helper asked for), and returns their results in job order. Callers
//! split their work so that which thread runs a job never changes its
//! result (disjoint islands, leaves, proxies or pairs): the bits are the
//! same for any thread count.
//!
//! **Helpers stay.** A step shares work two or three times, and starting a
//! scoped thread for each share cost 28 µs a call on a two-core virtual
//! machine (two small jobs, `benches/fx.rs`), up to 40 µs within a step: as
//! much as a tenth of a cube game's frame. So the helpers are started once,
//! when first needed, and kept for the life of the process, one pool for
//! every caller (at most two per core). After a job a helper waits for the
//! next one by spinning for a while (yielding its core every few rounds to
//! any other thread that wants it), then sleeps until a caller wakes it. A
//! share handed to a helper that is still spinning costs a few atomic
//! operations (the same small jobs: 0.4 µs a call); that covers the shares
//! of one step and the frames of a replay, while the first share of a live
//! frame, 16 ms after the last, wakes a sleeping helper (on a two-core
//! virtual machine that took longer than a 30 µs share: `benches/fx.rs`,
//! `two_jobs_after_a_pause`).
//!
//! **Never slower than one thread.** When the caller has run its own job,
//! it takes back every job a helper has not picked up yet and runs it
//! itself, as rayon's `join` runs the closure no other thread stole: a
//! helper that is asleep, or whose core another program holds, costs the
//! caller nothing. Only for a job a helper has started does the caller
//! wait: spinning, then asleep until the last one done wakes it. (Before
//! this, on a two-core machine running two busy loops besides, replaying
//! the four-seat RTS on two threads took 7.5 times as long as on one: a
//! caller slept a scheduler's slice whenever its helper was off its core.)
//!
//! **Background work.** Work that may be done by any thread at any time
//! before its owner needs it (a frame hasher's leaves, hashed while the
//! next frame steps) is posted as [`Background`] work: a waiting helper
//! does a small part of it in each round of its wait, and takes a job
//! posted meanwhile as soon as that part is done (and so does a caller
//! waiting for its helpers' jobs). So the background work fills the gaps
//! between a step's shares on the pool's own threads, rather than on a
//! thread of its own that would take turns with the shares for the cores.
//! Its owner does whatever parts are left itself when it needs the result,
//! so it never waits on a helper that is not there, and a part is small (a
//! 16 KiB leaf: a few microseconds) so a job waits little for a helper busy
//! with one.
//!
//! **Invariant: a missing helper is not an error.** Where no helper is
//! idle (all busy with other callers' jobs, the pool full, or the system
//! refusing to start one: resources exhausted, a host without threads),
//! the job runs on the calling thread instead, with the same result, and
//! background work is done by its owner;
//! nothing panics and no caller waits for a helper to come free (only,
//! once per helper, for another caller to finish starting one). A job that
//! panics, on any thread, panics the caller with its own payload once every
//! job has ended, as a job run in place would.
//!
//! **The one unsafe block.** A job borrows the caller's data, and a helper
//! lives longer than any caller, so the helper receives each job as a raw
//! pointer to a [`Handoff`] on the caller's side, whose lifetime the type
//! system cannot see. It is sound because [`fork_join`] neither returns nor
//! unwinds before every handoff it posted is marked done (a guard waits on
//! them even if the caller's own share panics), and marking it done is the
//! last thing a helper does with it.

use std::any::Any;
use std::hint;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, Thread};

/// The most helpers the pool starts per core the system reports; a job
/// that finds all of them busy runs where it is.
const HELPERS_PER_CORE: usize = 2;

/// Rounds a helper spins for the next job, or a caller for its helpers,
/// before it sleeps (about 0.1 to 0.5 ms, depending on the processor):
/// long enough to span the gaps between the shares of one step, and
/// between frames of a replay.
const SPIN_ROUNDS: u32 = 4096;

/// A spinning thread yields its core once every this many rounds, so that
/// a thread with work (a frame's hasher, another test) is not kept waiting.
const YIELD_EVERY: u32 = 16;

/// Where one job stands.
enum Slot<T, R> {
    /// Not started.
    Job(T),
    /// Taken by the thread running it.
    Running,
    /// Finished, with its result.
    Done(R),
    /// Panicked, with the panic's payload.
    Panicked(Box<dyn Any + Send>),
}

/// One job as a helper sees it: what to run, where to say it is done, and
/// whom to wake then.
struct Handoff<'a> {
    run: &'a (dyn Fn() + Sync),
    done: AtomicBool,
    caller: Thread,
}

/// What a caller and a helper share: the posted job and whether a caller
/// holds the helper.
struct Mailbox {
    /// The posted job, or null.
    job: AtomicPtr<Handoff<'static>>,
    /// Claimed by a caller, from [`claim`] until its job has run (the
    /// helper goes idle just before it marks the job done).
    busy: AtomicBool,
}

/// A started helper.
struct Helper {
    mailbox: &'static Mailbox,
    thread: Thread,
}

/// Work that the pool's waiting helpers do a part at a time (see the
/// module documentation), posted with [`post_background`] and withdrawn
/// with [`withdraw_background`] by its owner, which does the parts left
/// itself. Every part must give the same result on any thread.
pub(crate) trait Background: Send + Sync {
    /// Does one part, if one is left to take; whether it did.
    fn part(&self) -> bool;

    /// Whether a part is left to take.
    fn has_parts(&self) -> bool;
}

/// The posted background work, oldest first.
static BACKLOG: Mutex<Vec<Arc<dyn Background>>> = Mutex::new(Vec::new());

/// How much work [`BACKLOG`] holds, read without its lock by waiting
/// helpers.
static BACKLOG_LEN: AtomicUsize = AtomicUsize::new(0);

/// Posts `work` for the pool's waiting helpers, waking those asleep (and
/// starting one where the pool has none and the machine has a core for it).
pub(crate) fn post_background(work: Arc<dyn Background>) {
    {
        let mut backlog = BACKLOG.lock().unwrap_or_else(PoisonError::into_inner);
        backlog.push(work);
        BACKLOG_LEN.store(backlog.len(), Ordering::Release);
    }
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if pool.helpers.is_empty() && !pool.refused && cores() > 1 && !probe::refused() {
        match Helper::start() {
            Some(helper) => {
                // Started claimed: it has no job, so it is idle.
                helper.mailbox.busy.store(false, Ordering::Release);
                pool.helpers.push(helper);
            }
            None => pool.refused = true,
        }
    }
    for helper in &pool.helpers {
        if !helper.mailbox.busy.load(Ordering::Relaxed) {
            helper.thread.unpark();
        }
    }
}

/// Takes `work` (posted as it is, or as any other handle to the same
/// value) out of the backlog: no helper starts a part of it after this
/// returns (one may still be doing a part it took before).
pub(crate) fn withdraw_background<W: Background + ?Sized>(work: &Arc<W>) {
    let mut backlog = BACKLOG.lock().unwrap_or_else(PoisonError::into_inner);
    backlog.retain(|w| !ptr::addr_eq(Arc::as_ptr(w), Arc::as_ptr(work)));
    BACKLOG_LEN.store(backlog.len(), Ordering::Release);
}

/// Does one part of the oldest posted work that has parts left, if any.
fn help_in_background() {
    if BACKLOG_LEN.load(Ordering::Acquire) == 0 {
        return;
    }
    let work = BACKLOG
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|w| w.has_parts())
        .cloned();
    // The lock is released before the part: the owner may withdraw it
    // meanwhile, and this clone keeps it alive until the part is done. A
    // part that panics leaves the helper serving (its owner finds the
    // part unfinished).
    if let Some(w) = work {
        let _ = catch_unwind(AssertUnwindSafe(|| w.part()));
    }
}

/// The pool's helpers, and whether the system refused to start one (then
/// no start is tried again).
struct Pool {
    helpers: Vec<&'static Helper>,
    refused: bool,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    helpers: Vec::new(),
    refused: false,
});

/// Runs `work` on each of `jobs`, the first on the calling thread and the
/// others on helper threads (or on the calling thread, after the first,
/// where no helper is to be had); returns the results in the order of
/// `jobs`.
///
/// ```
/// use lockstep_fx::fork_join;
///
/// let mut data = vec![1u64; 1000];
/// let sums = fork_join(data.chunks_mut(250).collect(), |chunk| {
///     chunk.iter_mut().for_each(|x| *x *= 2);
///     chunk.iter().sum::<u64>()
/// });
/// assert_eq!(sums, vec![500; 4]);
/// ```
pub fn fork_join<T: Send, R: Send>(jobs: Vec<T>, work: impl Fn(T) -> R + Sync) -> Vec<R> {
    if jobs.len() <= 1 {
        // Nothing to share: no helper, no slot.
        return jobs.into_iter().map(work).collect();
    }
    let slots: Vec<Mutex<Slot<T, R>>> = jobs
        .into_iter()
        .map(|job| Mutex::new(Slot::Job(job)))
        .collect();
    // Never panics: a job's panic is caught into its slot.
    let run = |slot: &Mutex<Slot<T, R>>| {
        let taken = core::mem::replace(
            &mut *slot.lock().unwrap_or_else(PoisonError::into_inner),
            Slot::Running,
        );
        if let Slot::Job(job) = taken {
            let ended = match catch_unwind(AssertUnwindSafe(|| work(job))) {
                Ok(result) => Slot::Done(result),
                Err(payload) => Slot::Panicked(payload),
            };
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = ended;
        }
    };
    let others: Vec<_> = slots[1..].iter().map(|slot| move || run(slot)).collect();
    let caller = thread::current();
    let handoffs: Vec<Handoff<'_>> = others
        .iter()
        .map(|job| Handoff {
            run: job,
            done: AtomicBool::new(false),
            caller: caller.clone(),
        })
        .collect();
    {
        let mut posted = Posted {
            handoffs: &handoffs,
            to_helper: Vec::with_capacity(handoffs.len()),
            helpers: Vec::with_capacity(handoffs.len()),
        };
        for handoff in &handoffs {
            let helper = claim();
            // Marked before it is posted: the guard must wait for every
            // handoff a helper may hold.
            posted.to_helper.push(helper.is_some());
            posted.helpers.push(helper);
            if let Some(helper) = helper {
                helper.post(handoff);
            }
        }
        run(&slots[0]);
        // Every job no helper has picked up yet is run here, as is every
        // job that found no helper: a helper that is slow to start (asleep,
        // or its core taken by another program) costs this caller nothing.
        for (k, handoff) in handoffs.iter().enumerate() {
            if posted.to_helper[k] && posted.take_back(k) {
                posted.to_helper[k] = false;
            }
            if !posted.to_helper[k] {
                (handoff.run)();
            }
        }
        // `posted` waits here for the jobs helpers picked up.
    }
    slots
        .into_iter()
        .map(
            |slot| match slot.into_inner().unwrap_or_else(PoisonError::into_inner) {
                Slot::Done(result) => result,
                // The first job in order that panicked, with its own payload.
                Slot::Panicked(payload) => resume_unwind(payload),
                // Every slot was run once, by a helper or here.
                Slot::Job(_) | Slot::Running => unreachable!("a fork_join job was not run"),
            },
        )
        .collect()
}

/// The handoffs of one [`fork_join`] call and which went to helpers: on
/// drop (the call's end, or an unwind through it) it waits until each of
/// those still with a helper is done, so no helper outlives what it
/// borrows.
struct Posted<'h, 'a> {
    handoffs: &'h [Handoff<'a>],
    /// Whether each handoff is with a helper (posted and not taken back).
    to_helper: Vec<bool>,
    /// The helper each handoff was posted to.
    helpers: Vec<Option<&'static Helper>>,
}

impl Posted<'_, '_> {
    /// Takes the `k`-th handoff back from its helper if the helper has not picked it
    /// up yet, and lets the helper go; whether it did. Exactly one of the
    /// helper's pick-up and this succeeds (both swap the mailbox's pointer
    /// out), so a handoff taken back is never seen by its helper.
    fn take_back(&self, k: usize) -> bool {
        let Some(helper) = self.helpers[k] else {
            return false;
        };
        let erased = ptr::from_ref(&self.handoffs[k])
            .cast_mut()
            .cast::<Handoff<'static>>();
        let taken = helper
            .mailbox
            .job
            .compare_exchange(erased, ptr::null_mut(), Ordering::AcqRel, Ordering::Relaxed)
            .is_ok();
        if taken {
            // Claimed by this caller and holding no job: idle again.
            helper.mailbox.busy.store(false, Ordering::Release);
        }
        taken
    }
}

impl Drop for Posted<'_, '_> {
    fn drop(&mut self) {
        for (handoff, _) in self
            .handoffs
            .iter()
            .zip(&self.to_helper)
            .filter(|(_, h)| **h)
        {
            // The helper unparks this thread once it is done; meanwhile
            // this thread does parts of any background work, as a waiting
            // helper does.
            wait_for(|| {
                let done = handoff.done.load(Ordering::Acquire);
                if !done {
                    help_in_background();
                }
                done.then_some(())
            });
        }
    }
}

/// Waits until `ready` gives a value: spinning for [`SPIN_ROUNDS`] rounds
/// (a spin hint each, and every [`YIELD_EVERY`] rounds the core handed to
/// any other thread that wants it), then asleep, woken by whoever makes it
/// ready (or spuriously: `ready` is asked again).
fn wait_for<T>(mut ready: impl FnMut() -> Option<T>) -> T {
    let mut rounds = 0u32;
    loop {
        if let Some(value) = ready() {
            return value;
        }
        if rounds < SPIN_ROUNDS {
            rounds += 1;
            if rounds % YIELD_EVERY == 0 {
                thread::yield_now();
            } else {
                hint::spin_loop();
            }
        } else {
            thread::park();
        }
    }
}

/// An idle helper, claimed for one job (started if none is idle and the
/// pool may grow), or `None`: the job then runs on the caller.
fn claim() -> Option<&'static Helper> {
    if probe::refused() {
        return None;
    }
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    let idle = pool.helpers.iter().find(|h| {
        h.mailbox
            .busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    });
    if let Some(helper) = idle {
        return Some(*helper);
    }
    if pool.refused || pool.helpers.len() >= most_helpers() {
        return None;
    }
    match Helper::start() {
        Some(helper) => {
            pool.helpers.push(helper);
            Some(helper)
        }
        None => {
            pool.refused = true;
            None
        }
    }
}

/// How many helpers the pool may start: [`HELPERS_PER_CORE`] per core the
/// system reports (one if it cannot tell).
fn most_helpers() -> usize {
    cores().saturating_mul(HELPERS_PER_CORE)
}

/// The cores the system reports (one if it cannot tell).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| thread::available_parallelism().map_or(1, usize::from))
}

impl Helper {
    /// Starts a helper, already claimed, or `None` if the system cannot.
    fn start() -> Option<&'static Helper> {
        let mailbox: &'static Mailbox = Box::leak(Box::new(Mailbox {
            job: AtomicPtr::new(ptr::null_mut()),
            busy: AtomicBool::new(true),
        }));
        let started = thread::Builder::new()
            .name("fork-join".into())
            .spawn(move || serve(mailbox));
        // A refused start leaks one small mailbox, once: the pool then
        // starts no more.
        let thread = started.ok()?.thread().clone();
        Some(Box::leak(Box::new(Helper { mailbox, thread })))
    }

    /// Hands `handoff` to this helper, which the caller has claimed.
    fn post(&self, handoff: &Handoff<'_>) {
        let erased = ptr::from_ref(handoff).cast_mut().cast::<Handoff<'static>>();
        self.mailbox.job.store(erased, Ordering::Release);
        // Wakes the helper if it sleeps; if it is still spinning this only
        // leaves a token that makes its next sleep return at once.
        self.thread.unpark();
    }
}

/// A helper's life: wait for a job (spinning, then asleep, and doing a
/// part of any background work in each round), run it, become idle, mark
/// the job done and wake its caller; forever.
fn serve(mailbox: &'static Mailbox) {
    loop {
        // A caller unparks this thread when it posts a job, and so does
        // one that posts background work.
        let job = wait_for(|| {
            if mailbox.job.load(Ordering::Relaxed).is_null() || probe::stalled() {
                help_in_background();
                return None;
            }
            // Its caller may have taken the job back meanwhile (it found
            // its own share done before this helper came to it).
            let job = mailbox.job.swap(ptr::null_mut(), Ordering::Acquire);
            (!job.is_null()).then_some(job)
        });
        // SAFETY: a job is posted only by `fork_join`, which keeps its
        // handoff alive, unmoved, until `done` is set (see `Posted`); it is
        // set below, after the last use of the handoff.
        #[allow(unsafe_code)]
        let handoff = unsafe { &*job };
        // `run` catches its job's panic; this is only belt and braces, so
        // that `done` is always set.
        let _ = catch_unwind(AssertUnwindSafe(handoff.run));
        let caller = handoff.caller.clone();
        // Idle before done, so that a caller that shares again at once
        // finds this helper free.
        mailbox.busy.store(false, Ordering::Release);
        handoff.done.store(true, Ordering::Release);
        caller.unpark();
    }
}

/// Lets a test refuse helpers, as a host without threads does, and count
/// the requests (on the test's own thread only).
#[cfg(not(test))]
pub(crate) mod probe {
    pub(crate) fn refused() -> bool {
        false
    }

    pub(crate) fn stalled() -> bool {
        false
    }
}

#[cfg(test)]
pub(crate) mod probe {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, Ordering};

    thread_local! {
        static REFUSE: Cell<bool> = const { Cell::new(false) };
        static STARTS: Cell<u32> = const { Cell::new(0) };
    }

    /// Counts a request for a helper; whether it is refused.
    pub(crate) fn refused() -> bool {
        STARTS.set(STARTS.get() + 1);
        REFUSE.get()
    }

    pub(crate) fn refuse(refuse: bool) {
        REFUSE.set(refuse);
    }

    pub(crate) fn starts() -> u32 {
        STARTS.get()
    }

    /// While set, no helper picks up a posted job (as helpers whose cores
    /// another program holds): for every thread of the test process.
    static STALLED: AtomicBool = AtomicBool::new(false);

    pub(crate) fn stalled() -> bool {
        STALLED.load(Ordering::Relaxed)
    }

    pub(crate) fn stall(stall: bool) {
        STALLED.store(stall, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn squares(jobs: u64) -> Vec<u64> {
        fork_join((0..jobs).collect(), |j| j * j)
    }

    #[test]
    fn results_come_in_job_order_on_threads_or_in_place() {
        let expected: Vec<u64> = (0..5).map(|j| j * j).collect();
        assert_eq!(squares(5), expected);
        probe::refuse(true);
        let before = probe::starts();
        assert_eq!(squares(5), expected);
        // Four helpers were asked for, none was given; all ran here.
        assert_eq!(probe::starts() - before, 4);
        probe::refuse(false);
        assert_eq!(squares(0), Vec::<u64>::new());
        assert_eq!(squares(1), vec![0]);
    }

    /// Background work counting how often each of its parts was done.
    struct Tally {
        next: AtomicUsize,
        done: Vec<AtomicUsize>,
    }

    impl Background for Tally {
        fn part(&self) -> bool {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(count) = self.done.get(i) else {
                return false;
            };
            // A part's worth of work, for a helper to be caught in it.
            let mut x = 0u64;
            for k in 0..2_000u64 {
                x = core::hint::black_box(x.wrapping_add(k));
            }
            core::hint::black_box(x);
            count.fetch_add(1, Ordering::Release);
            true
        }

        fn has_parts(&self) -> bool {
            self.next.load(Ordering::Relaxed) < self.done.len()
        }
    }

    /// Posted background work is done part by part, each part exactly
    /// once, whether the pool's helpers take some of it (between the jobs
    /// of a `fork_join` meanwhile) or, with helpers refused, the owner does
    /// what no helper started before took; a part still being done when
    /// the owner withdraws the work is finished.
    #[test]
    fn each_part_of_background_work_is_done_once() {
        for refuse in [false, true] {
            probe::refuse(refuse);
            let tally = Arc::new(Tally {
                next: AtomicUsize::new(0),
                done: (0..400).map(|_| AtomicUsize::new(0)).collect(),
            });
            post_background(tally.clone());
            for _ in 0..20 {
                assert_eq!(squares(4), vec![0, 1, 4, 9]);
            }
            while tally.part() {}
            withdraw_background(&tally);
            // Bounded: a helper finishes a part it took in microseconds.
            let finished = (0..1_000_000).any(|_| {
                let all = tally.done.iter().all(|d| d.load(Ordering::Acquire) == 1);
                if !all {
                    thread::yield_now();
                }
                all
            });
            assert!(finished, "every part done once");
            assert!(!tally.has_parts());
        }
        probe::refuse(false);
    }

    #[test]
    fn a_job_that_panics_panics_the_caller_with_its_own_message() {
        for refuse in [false, true] {
            probe::refuse(refuse);
            let caught = catch_unwind(|| {
                fork_join((0..4).collect(), |j: u32| {
                    assert_ne!(j, 2, "job two failed");
                    j
                })
            });
            let payload = caught.expect_err("job 2 panics");
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert!(message.contains("job two failed"), "{message}");
            // Whoever ran the failing job, the next jobs run.
            assert_eq!(squares(4), vec![0, 1, 4, 9]);
        }
        probe::refuse(false);
    }

    /// Eight callers at once, each sharing jobs many times (some of which
    /// share again): helpers are claimed by whoever asks first, a job that
    /// finds none free runs in place, and every caller gets its own results
    /// in order.
    #[test]
    fn callers_on_many_threads_share_the_pool() {
        std::thread::scope(|s| {
            for caller in 0..8u64 {
                s.spawn(move || {
                    for round in 0..200u64 {
                        let jobs: Vec<u64> =
                            (0..5).map(|j| caller * 10_000 + round * 10 + j).collect();
                        let sums = fork_join(jobs.clone(), |j| {
                            fork_join(vec![j, j + 1], |x| x * 2).iter().sum::<u64>()
                        });
                        let expected: Vec<u64> = jobs.iter().map(|j| 4 * j + 2).collect();
                        assert_eq!(sums, expected);
                    }
                });
            }
        });
    }

    /// With every helper stalled (none picks up what is posted to it), a
    /// caller takes back each job it posted and runs it itself, instead of
    /// waiting for a helper: sharing never costs more than running alone.
    /// Other tests of this process running meanwhile only run in place.
    #[test]
    fn a_caller_runs_the_jobs_no_helper_picked_up() {
        // Helpers started and idle first, so that jobs are posted to them.
        assert_eq!(squares(3), vec![0, 1, 4]);
        probe::stall(true);
        for _ in 0..100 {
            assert_eq!(squares(3), vec![0, 1, 4]);
        }
        probe::stall(false);
        assert_eq!(squares(3), vec![0, 1, 4]);
    }

    #[test]
    fn each_job_owns_its_share_of_the_data() {
        let mut data: Vec<u32> = (0..100).collect();
        for refuse in [false, true] {
            probe::refuse(refuse);
            let sums = fork_join(data.chunks_mut(30).collect(), |chunk| {
                chunk.iter_mut().for_each(|x| *x += 1);
                chunk.iter().sum::<u32>()
            });
            assert_eq!(sums.len(), 4);
            assert_eq!(sums.iter().sum::<u32>(), data.iter().sum::<u32>());
        }
        probe::refuse(false);
        assert_eq!(data, (2..102).collect::<Vec<u32>>());
    }
}
