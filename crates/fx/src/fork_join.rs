//! Fork–join over scoped threads: the one way the deterministic crates share
//! a piece of work between threads.
//!
//! [`fork_join`] runs a list of jobs, the first on the calling thread and
//! each other on a scoped thread of its own (a single job runs in place,
//! with nothing started), and returns their results in job order. Callers
//! split their work so that which thread runs a job never changes its
//! result (disjoint islands, leaves, strips or pairs): the bits are the
//! same for any thread count.
//!
//! **Invariant: a refused thread is not an error.** Where the system will
//! not start a thread (resources exhausted, a host without threads), the
//! job is run on the calling thread instead, with the same result; nothing
//! panics. A job that panics, on any thread, panics the caller with its own
//! payload once every job has ended, as a job run in place would.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Mutex, PoisonError};

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

/// Runs `work` on each of `jobs`, the first on the calling thread and the
/// others on scoped threads (or on the calling thread, after the first,
/// where the system refuses to start one); returns the results in the order
/// of `jobs`.
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
        // Nothing to share: no thread, no slot.
        return jobs.into_iter().map(work).collect();
    }
    let slots: Vec<Mutex<Slot<T, R>>> = jobs
        .into_iter()
        .map(|job| Mutex::new(Slot::Job(job)))
        .collect();
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
    std::thread::scope(|s| {
        let mut refused = Vec::new();
        for slot in slots.iter().skip(1) {
            let run = &run;
            let started = !probe::refused()
                && std::thread::Builder::new()
                    .spawn_scoped(s, move || run(slot))
                    .is_ok();
            if !started {
                refused.push(slot);
            }
        }
        if let Some(first) = slots.first() {
            run(first);
        }
        for slot in refused {
            run(slot);
        }
    });
    slots
        .into_iter()
        .map(
            |slot| match slot.into_inner().unwrap_or_else(PoisonError::into_inner) {
                Slot::Done(result) => result,
                // The first job in order that panicked, with its own payload.
                Slot::Panicked(payload) => resume_unwind(payload),
                // Every slot was run once, on its thread or here.
                Slot::Job(_) | Slot::Running => unreachable!("a fork_join job was not run"),
            },
        )
        .collect()
}

/// Lets a test refuse to start threads, as a host without threads does, and
/// count the attempts (on the test's own thread only).
#[cfg(not(test))]
pub(crate) mod probe {
    pub(crate) fn refused() -> bool {
        false
    }
}

#[cfg(test)]
pub(crate) mod probe {
    use std::cell::Cell;

    thread_local! {
        static REFUSE: Cell<bool> = const { Cell::new(false) };
        static STARTS: Cell<u32> = const { Cell::new(0) };
    }

    /// Counts an attempt to start a thread; whether it is refused.
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
        // Four threads were asked for, none started; all ran here.
        assert_eq!(probe::starts() - before, 4);
        probe::refuse(false);
        assert_eq!(squares(0), Vec::<u64>::new());
        assert_eq!(squares(1), vec![0]);
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
        }
        probe::refuse(false);
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
