//! What became of each request: outcomes, their counters, and the
//! snapshot [`PriorityLayer::counts`](crate::PriorityLayer::counts) returns.

use http::StatusCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What became of one request. Every request received ends in exactly one
/// outcome, counted in [`Counts`].
///
/// # Examples
///
/// ```
/// use http::StatusCode;
/// use priority_executor_tower::Outcome;
///
/// assert_eq!(Outcome::Shed.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
/// assert_eq!(Outcome::Expired.as_str(), "expired");
/// assert_eq!(Outcome::Abandoned.status(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// The handler ran and its response was sent.
    Completed,
    /// Its lane was full, or no worker thread could be started for it:
    /// `503 Service Unavailable` with `Retry-After`.
    Shed,
    /// The executor was shutting down, or the registry no longer has it:
    /// `503` with `Retry-After`.
    ShutDown,
    /// It waited in its lane past the layer's `ttl` and never ran:
    /// `504 Gateway Timeout`.
    Expired,
    /// The handler panicked (the worker lives on), or the layer's
    /// [`classify`](crate::PriorityLayer::classify) closure did: `500`.
    Panicked,
    /// The priority it was given has no lane: `500`, a configuration
    /// mistake (a classifier returning a priority the executor lacks).
    Misrouted,
    /// Queued, then handed back by `shutdown_now` and dropped unrun:
    /// `503` with `Retry-After`. The answer goes out when the jobs
    /// `shutdown_now` returned are dropped: an application that keeps them
    /// (to run them elsewhere) holds these requests open until then.
    Cancelled,
    /// Its body could not be read: `400 Bad Request`.
    BadBody,
    /// Its body was longer than the layer's limit: `413 Payload Too Large`.
    TooLarge,
    /// The client went away (the response future was dropped) before the
    /// answer was ready. A job not yet started is cancelled and never runs
    /// (it keeps its place in its lane until a worker passes over it); one
    /// already running finishes, and its response is dropped.
    Abandoned,
}

impl Outcome {
    /// Every outcome, in the order of [`Counts`]' fields.
    pub const ALL: [Outcome; 10] = [
        Outcome::Completed,
        Outcome::Shed,
        Outcome::ShutDown,
        Outcome::Expired,
        Outcome::Panicked,
        Outcome::Misrouted,
        Outcome::Cancelled,
        Outcome::BadBody,
        Outcome::TooLarge,
        Outcome::Abandoned,
    ];

    /// The outcome's name, as the `outcome` label of the `metrics` feature.
    ///
    /// # Examples
    ///
    /// See [`Outcome`].
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Shed => "shed",
            Outcome::ShutDown => "shut_down",
            Outcome::Expired => "expired",
            Outcome::Panicked => "panicked",
            Outcome::Misrouted => "misrouted",
            Outcome::Cancelled => "cancelled",
            Outcome::BadBody => "bad_body",
            Outcome::TooLarge => "too_large",
            Outcome::Abandoned => "abandoned",
        }
    }

    /// The status the layer answers with; `None` for a completed request
    /// (the handler chose its status) and an abandoned one (no answer).
    ///
    /// # Examples
    ///
    /// See [`Outcome`].
    pub fn status(self) -> Option<StatusCode> {
        match self {
            Outcome::Completed | Outcome::Abandoned => None,
            Outcome::Shed | Outcome::ShutDown | Outcome::Cancelled => {
                Some(StatusCode::SERVICE_UNAVAILABLE)
            }
            Outcome::Expired => Some(StatusCode::GATEWAY_TIMEOUT),
            Outcome::Panicked | Outcome::Misrouted => Some(StatusCode::INTERNAL_SERVER_ERROR),
            Outcome::BadBody => Some(StatusCode::BAD_REQUEST),
            Outcome::TooLarge => Some(StatusCode::PAYLOAD_TOO_LARGE),
        }
    }

    fn index(self) -> usize {
        match self {
            Outcome::Completed => 0,
            Outcome::Shed => 1,
            Outcome::ShutDown => 2,
            Outcome::Expired => 3,
            Outcome::Panicked => 4,
            Outcome::Misrouted => 5,
            Outcome::Cancelled => 6,
            Outcome::BadBody => 7,
            Outcome::TooLarge => 8,
            Outcome::Abandoned => 9,
        }
    }
}

/// The layer's counters: requests received and what became of them.
///
/// Every request received is in flight or has exactly one outcome:
/// `received == in_flight + completed + shed + shut_down + expired +
/// panicked + misrouted + cancelled + bad_body + too_large + abandoned`
/// (see [`settled`](Counts::settled)). The figures are each exact but not
/// taken at one instant.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
/// use priority_executor_tower::PriorityLayer;
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
/// let layer = PriorityLayer::new(exec.clone());
/// let counts = layer.counts();
/// assert_eq!((counts.received, counts.in_flight()), (0, 0));
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Requests the service was called with.
    pub received: u64,
    /// Answered by the handler.
    pub completed: u64,
    /// `503`: the lane was full.
    pub shed: u64,
    /// `503`: the executor was shutting down or gone.
    pub shut_down: u64,
    /// `504`: not started within the `ttl`.
    pub expired: u64,
    /// `500`: the handler panicked.
    pub panicked: u64,
    /// `500`: a priority with no lane.
    pub misrouted: u64,
    /// `503`: handed back by `shutdown_now` and dropped unrun.
    pub cancelled: u64,
    /// `400`: the body could not be read.
    pub bad_body: u64,
    /// `413`: the body was over the limit.
    pub too_large: u64,
    /// The client went away before the answer (the response future was
    /// dropped): a request still queued is cancelled and never runs; one
    /// running finishes, its answer dropped.
    pub abandoned: u64,
    /// Refused requests (answered, and counted above) not handed to the
    /// [`on_refused`](crate::PriorityLayer::on_refused) hook: its backlog
    /// ([`REFUSED_BACKLOG`](crate::REFUSED_BACKLOG)) was full, or no
    /// thread could be started for it. Not an outcome.
    pub hook_dropped: u64,
    /// Calls of the `on_refused` hook that panicked (the hook's thread
    /// goes on with the next refused request). Not an outcome.
    pub hook_panicked: u64,
}

impl Counts {
    /// Requests with an outcome: received less those in flight.
    ///
    /// # Examples
    ///
    /// See [`Counts`].
    pub fn settled(&self) -> u64 {
        self.completed
            + self.shed
            + self.shut_down
            + self.expired
            + self.panicked
            + self.misrouted
            + self.cancelled
            + self.bad_body
            + self.too_large
            + self.abandoned
    }

    /// Requests received and not yet settled.
    ///
    /// # Examples
    ///
    /// See [`Counts`].
    pub fn in_flight(&self) -> u64 {
        self.received.saturating_sub(self.settled())
    }

    /// The count of one outcome.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor_tower::{Counts, Outcome};
    ///
    /// assert_eq!(Counts::default().get(Outcome::Shed), 0);
    /// ```
    pub fn get(&self, outcome: Outcome) -> u64 {
        match outcome {
            Outcome::Completed => self.completed,
            Outcome::Shed => self.shed,
            Outcome::ShutDown => self.shut_down,
            Outcome::Expired => self.expired,
            Outcome::Panicked => self.panicked,
            Outcome::Misrouted => self.misrouted,
            Outcome::Cancelled => self.cancelled,
            Outcome::BadBody => self.bad_body,
            Outcome::TooLarge => self.too_large,
            Outcome::Abandoned => self.abandoned,
        }
    }
}

/// The live counters, shared by a layer and every service it made.
#[derive(Debug)]
pub(crate) struct Counters {
    /// The executor's name, the `executor` label of the `metrics` feature
    /// and the name of the `on_refused` hook's thread.
    executor: Arc<str>,
    received: AtomicU64,
    outcomes: [AtomicU64; Outcome::ALL.len()],
    hook_dropped: AtomicU64,
    hook_panicked: AtomicU64,
}

impl Counters {
    pub(crate) fn new(executor: Arc<str>) -> Self {
        Counters {
            executor,
            received: AtomicU64::new(0),
            outcomes: Default::default(),
            hook_dropped: AtomicU64::new(0),
            hook_panicked: AtomicU64::new(0),
        }
    }

    pub(crate) fn executor(&self) -> &str {
        &self.executor
    }

    pub(crate) fn hook_dropped(&self) {
        // ORDERING: a count read on its own; it orders nothing.
        self.hook_dropped.fetch_add(1, Relaxed);
    }

    pub(crate) fn hook_panicked(&self) {
        // ORDERING: a count read on its own; it orders nothing.
        self.hook_panicked.fetch_add(1, Relaxed);
    }

    pub(crate) fn received(&self) {
        self.received.fetch_add(1, Relaxed);
        #[cfg(feature = "metrics")]
        metrics::counter!(
            "priority_executor_http_requests_received_total",
            "executor" => self.executor.to_string()
        )
        .increment(1);
    }

    pub(crate) fn settle(&self, outcome: Outcome) {
        self.outcomes[outcome.index()].fetch_add(1, Relaxed);
        #[cfg(feature = "metrics")]
        metrics::counter!(
            "priority_executor_http_requests_total",
            "executor" => self.executor.to_string(),
            "outcome" => outcome.as_str()
        )
        .increment(1);
    }

    pub(crate) fn snapshot(&self) -> Counts {
        // Outcomes first: a request settled between the two reads is then
        // counted received, never settled without being received.
        let get = |o: Outcome| self.outcomes[o.index()].load(Relaxed);
        let mut counts = Counts {
            completed: get(Outcome::Completed),
            shed: get(Outcome::Shed),
            shut_down: get(Outcome::ShutDown),
            expired: get(Outcome::Expired),
            panicked: get(Outcome::Panicked),
            misrouted: get(Outcome::Misrouted),
            cancelled: get(Outcome::Cancelled),
            bad_body: get(Outcome::BadBody),
            too_large: get(Outcome::TooLarge),
            abandoned: get(Outcome::Abandoned),
            // ORDERING: counts read on their own; they order nothing.
            hook_dropped: self.hook_dropped.load(Relaxed),
            hook_panicked: self.hook_panicked.load(Relaxed),
            ..Counts::default()
        };
        counts.received = self.received.load(Relaxed);
        counts
    }
}

/// One request in flight: settles it exactly once, as
/// [`Outcome::Abandoned`] if dropped unsettled (the client went away).
#[derive(Debug)]
pub(crate) struct InFlight {
    counters: Arc<Counters>,
    settled: bool,
}

impl InFlight {
    pub(crate) fn new(counters: Arc<Counters>) -> Self {
        counters.received();
        InFlight {
            counters,
            settled: false,
        }
    }

    pub(crate) fn settle(mut self, outcome: Outcome) {
        self.settled = true;
        self.counters.settle(outcome);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.settled {
            self.counters.settle(Outcome::Abandoned);
        }
    }
}
