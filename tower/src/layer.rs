//! [`PriorityLayer`]: where requests go (an executor, or one of a
//! registry's), how they get a priority, and the limits that apply.

use crate::counts::{Counters, Counts};
use crate::refused::{Refused, RefusedHook};
use crate::{drop_quietly, headers_to_message};
use priority_executor::{Executor, Priority, Registry};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

/// The body limit when none is set: 2 MiB, as axum's default.
pub const DEFAULT_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The longest `Retry-After` a `503` carries: one day. A longer
/// [`retry_after`](PriorityLayer::retry_after) is cut to it (a client
/// told to stay away longer than that has been told to go away, which is
/// not what a full lane means).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Gives a request its priority from its head (method, URI, headers).
pub(crate) type ClassifyFn = Arc<dyn Fn(&http::request::Parts) -> Priority + Send + Sync>;

/// Where requests are queued.
#[derive(Clone)]
pub(crate) enum Target {
    /// One executor, and its lowest lane (lanes never change).
    One {
        executor: Executor,
        lowest: Priority,
    },
    /// A registry's executor, looked up for each request, so that a reload
    /// that replaces it (or its rules) applies to the next request.
    Registry {
        executors: Arc<Registry>,
        name: Arc<str>,
    },
}

/// A tower [`Layer`](tower::Layer) that runs a synchronous handler
/// ([`BlockingHandler`](crate::BlockingHandler)) on the worker threads of a priority executor, each request in the lane
/// of its priority; the response future awaits the job.
///
/// A request's priority comes from the executor's rules in
/// `executors.toml`, with the request's headers as the message's
/// properties ([`from_registry`](PriorityLayer::from_registry)), or from a
/// closure ([`classify`](PriorityLayer::classify)). The service never
/// blocks the async runtime: a request whose lane is full is answered
/// `503` at once (see [`PriorityService`](crate::PriorityService) for every answer).
///
/// One layer may wrap several handlers; they share its counters.
///
/// # In a `ServiceBuilder` stack
///
/// The layer is the innermost of a stack: what it wraps is the handler
/// itself, not an async inner `Service`. The executor's workers run plain
/// closures; an inner service's future would have to be driven there by
/// a runtime of its own, or block a worker on it, which is the waste the
/// executor exists to avoid. Every layer above it composes as usual:
/// tower's `TimeoutLayer` and `ConcurrencyLimitLayer`, tracing, axum's
/// `HandleErrorLayer` (the visa example of this package runs such a stack).
/// A layer above that drops the response future, as a time-out does,
/// cancels the request's job if it still waits in its lane: it never runs
/// and is counted `abandoned` (its place in the lane is freed when a
/// worker reaches it and passes over it, so it counts against a bounded
/// lane's capacity until then).
///
/// # Refusing or waiting: the two modes
///
/// By default `poll_ready` is always ready: a request's lane is known only
/// from its head, so room cannot be awaited before the request is there.
/// A full lane answers `503` with `Retry-After` at once, which is what an
/// HTTP edge under a flood wants.
///
/// With [`backpressure`](PriorityLayer::backpressure) the lane is fixed
/// per layer (one per route and class), and `poll_ready` waits for room
/// in it through [`Executor::reserve`], keeping the slot for the next
/// `call`: a full lane is `Poll::Pending`, so tower's `Buffer`,
/// `ConcurrencyLimit` and `LoadShed` above compose as with any service
/// that applies backpressure (with `LoadShed` on top, a full lane is its
/// `Overloaded` error rather than a `503`). Use it where callers should
/// wait for room rather than be refused; see that method for the choice.
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use priority_executor::{Capacity, Executor, Priority};
/// use priority_executor_tower::PriorityLayer;
/// use std::time::Duration;
/// use tower::Layer;
///
/// let exec = Executor::builder()
///     .lane(Priority(10), Capacity::Bounded(100))
///     .lane(Priority(1), Capacity::Bounded(100))
///     .build()?;
/// let layer = PriorityLayer::new(exec.clone())
///     .classify(|head| {
///         if head.headers.contains_key("x-premium") { Priority(10) } else { Priority(1) }
///     })
///     .ttl(Duration::from_secs(2));
/// let service = layer.layer(|request: Request<Bytes>| Response::new(request.into_body()));
/// # let _ = service;
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
#[derive(Clone)]
pub struct PriorityLayer {
    pub(crate) target: Target,
    pub(crate) classify: Option<ClassifyFn>,
    pub(crate) ttl: Option<Duration>,
    pub(crate) retry_after: Duration,
    pub(crate) body_limit: usize,
    pub(crate) on_refused: Option<Arc<RefusedHook>>,
    pub(crate) counters: Arc<Counters>,
    /// The one lane of [`backpressure`](PriorityLayer::backpressure).
    pub(crate) backpressure: Option<Priority>,
}

/// A name given to [`PriorityLayer::from_registry`] that names no executor
/// of the registry.
///
/// # Examples
///
/// ```
/// use priority_executor::Registry;
/// use priority_executor_tower::PriorityLayer;
/// use std::sync::Arc;
///
/// let executors = Arc::new(Registry::from_toml_str("[executors.visa]\nlanes = [{ priority = 1 }]\n")?);
/// let err = PriorityLayer::from_registry(executors, "vias").unwrap_err();
/// assert_eq!(err.to_string(), "no executor named \"vias\" in the registry (executors: visa)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownExecutor {
    name: String,
    known: Vec<String>,
}

impl UnknownExecutor {
    /// The name that was not found.
    ///
    /// # Examples
    ///
    /// See [`UnknownExecutor`].
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for UnknownExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no executor named {:?} in the registry (executors: {})",
            self.name,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownExecutor {}

impl PriorityLayer {
    /// Requests go to `executor`, each in its lowest lane until a
    /// [`classify`](PriorityLayer::classify) closure says otherwise. The
    /// layer and its services keep a clone, so the executor stays open
    /// while they live (or until it is shut down through any clone).
    ///
    /// # Examples
    ///
    /// See [`PriorityLayer`].
    pub fn new(executor: Executor) -> Self {
        let name = Arc::from(executor.name());
        // The builder refuses an executor without lanes.
        let lowest = executor
            .config()
            .lanes
            .last()
            .map_or(Priority(0), |lane| lane.priority);
        PriorityLayer::with_target(Target::One { executor, lowest }, name)
    }

    /// Requests go to the registry's executor `name`, each in the lane its
    /// rules give: the request's headers are the message's properties (a
    /// header `PRIORITYID: ABC` matches `header = "PRIORITYID"`, `equals =
    /// "ABC"`; names ignore case; a header sent twice counts with its
    /// first value; values that are not UTF-8 are left out). No rule
    /// matching, the rule set's `default_priority`, else the executor's
    /// lowest lane. The executor and its rules are looked up per request,
    /// so a [`reload`](Registry::reload) applies from the next request on;
    /// a request whose body was still arriving when the reload came, and
    /// whose lane the new executor lacks (or whose executor the reload
    /// retired), is routed again by the rules in force, not refused (with
    /// a [`classify`](Self::classify) closure, a priority it gave that
    /// the new executor lacks is answered `500`, as any).
    /// (Before-enqueue hooks of the registry apply to sequences, not here.)
    ///
    /// # Errors
    ///
    /// [`UnknownExecutor`] if the registry has no executor `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    /// use priority_executor_tower::PriorityLayer;
    /// use std::sync::Arc;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    /// let executors = Arc::new(Registry::from_path(path)?);
    /// let layer = PriorityLayer::from_registry(executors, "visa_priority_exec")?;
    /// # let _ = layer;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_registry(executors: Arc<Registry>, name: &str) -> Result<Self, UnknownExecutor> {
        if executors.get(name).is_err() {
            return Err(UnknownExecutor {
                name: name.to_owned(),
                known: executors.names(),
            });
        }
        let name: Arc<str> = Arc::from(name);
        Ok(PriorityLayer::with_target(
            Target::Registry {
                executors,
                name: Arc::clone(&name),
            },
            name,
        ))
    }

    fn with_target(target: Target, name: Arc<str>) -> Self {
        PriorityLayer {
            target,
            classify: None,
            ttl: None,
            retry_after: Duration::from_secs(1),
            body_limit: DEFAULT_BODY_LIMIT,
            on_refused: None,
            counters: Arc::new(Counters::new(name)),
            backpressure: None,
        }
    }

    /// Gives each request its priority with `f`, from its head (method,
    /// URI, headers), instead of the registry's rules. A priority with no
    /// lane is answered `500` ([`Outcome::Misrouted`](crate::Outcome::Misrouted)).
    ///
    /// # Examples
    ///
    /// See [`PriorityLayer`].
    pub fn classify(
        mut self,
        f: impl Fn(&http::request::Parts) -> Priority + Send + Sync + 'static,
    ) -> Self {
        self.classify = Some(Arc::new(f));
        self
    }

    /// A request not started within `ttl` of its arrival is not run: it is
    /// answered `504 Gateway Timeout`. Default: no limit; a `ttl` too long
    /// for the clock to reach (`Duration::MAX`) is no limit either.
    ///
    /// The deadline is checked when a worker reaches the request: while
    /// every worker is busy (or its lane is paused) the `504` comes when
    /// one does, not at the deadline. For a hard limit on how long a
    /// client waits, put tower's `TimeoutLayer` above this layer: its
    /// time-out drops the response future, which cancels the waiting job.
    ///
    /// # Examples
    ///
    /// See [`PriorityLayer`].
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The `Retry-After` of a `503`, in whole seconds (rounded up, at least
    /// 1, at most [`MAX_RETRY_AFTER`]: any longer duration, up to
    /// `Duration::MAX`, is cut to it). Default: 1 second.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use priority_executor_tower::PriorityLayer;
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(10)).build()?;
    /// let layer = PriorityLayer::new(exec.clone()).retry_after(Duration::from_secs(5));
    /// # let _ = layer;
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = after.min(MAX_RETRY_AFTER);
        self
    }

    /// The `Retry-After` header's value: whole seconds, rounded up, from 1
    /// to [`MAX_RETRY_AFTER`]'s.
    pub(crate) fn retry_after_secs(&self) -> u64 {
        let d = self.retry_after;
        let secs = d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0));
        secs.clamp(1, MAX_RETRY_AFTER.as_secs())
    }

    /// The longest body read; a longer one is answered `413 Payload Too
    /// Large`. Default: [`DEFAULT_BODY_LIMIT`]; `usize::MAX` is no limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use priority_executor_tower::PriorityLayer;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(10)).build()?;
    /// let layer = PriorityLayer::new(exec.clone()).body_limit(64 * 1024);
    /// # let _ = layer;
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Receives every request the executor refused (full lane, shutting
    /// down, no such lane), whole, body included and unread by the handler,
    /// to log it, spool it or replay it elsewhere. Without it the request
    /// is dropped after its answer (and counted).
    ///
    /// The hook runs off the request path, on a thread of the layer's own
    /// (`<executor>-on-refused`, started with the first refusal, shared by
    /// every service of the layer, calling the hook with one request at a
    /// time): the client's answer never waits for it, and a hook that
    /// blocks (on a disk, a spool) holds no thread of the async runtime.
    /// Up to [`REFUSED_BACKLOG`](crate::REFUSED_BACKLOG) refused requests
    /// wait for a hook that falls behind; past that they are dropped after
    /// their answer and counted in [`Counts::hook_dropped`]. A panic of the
    /// hook is caught and counted in [`Counts::hook_panicked`]; the next
    /// refused request is handed over as usual. The thread ends once the
    /// layer and its services are dropped and the backlog is handed over.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use priority_executor_tower::PriorityLayer;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(10)).build()?;
    /// let layer = PriorityLayer::new(exec.clone()).on_refused(|refused| {
    ///     eprintln!("{:?} refused at priority {}: {} bytes", refused.outcome, refused.priority,
    ///         refused.request.body().len());
    /// });
    /// # let _ = layer;
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn on_refused(mut self, f: impl Fn(Refused) + Send + Sync + 'static) -> Self {
        let hook = RefusedHook::new(Arc::new(f), Arc::clone(&self.counters));
        self.on_refused = Some(Arc::new(hook));
        self
    }

    /// Backpressure mode: every request of this layer's services goes to
    /// the lane of `priority`, and a service's `poll_ready` waits for a
    /// free slot there (through [`Executor::reserve`]) instead of being
    /// always ready. The slot is the service's from then on: its next
    /// `call` queues the request in it without waiting (the slot is held
    /// while that request's body is read). A `Clone` of the service
    /// starts with no slot, as tower's own services do.
    ///
    /// The lane is fixed per layer, so give each route and class of
    /// request its own: one layer per `(route, priority)`. A
    /// [`classify`](Self::classify) closure and the registry's rules are
    /// not consulted in this mode. With a registry, the slot is taken in
    /// the executor the registry has when `poll_ready` runs; a request
    /// whose executor a reload retired in the meantime is queued in its
    /// successor without waiting, as in the default mode.
    ///
    /// A full lane is then `Poll::Pending` in `poll_ready`, which tower's
    /// middleware above reads as usual: `ConcurrencyLimit` and `Buffer`
    /// hold requests back until there is room, and `LoadShed` on top turns
    /// the not-ready service into its `Overloaded` error at once (such a
    /// request never reaches this layer and is not in its [`Counts`]).
    /// A priority with no lane, or an executor shutting down, makes
    /// `poll_ready` ready without a slot: the request is answered `500` or
    /// `503` by `call`, as in the default mode (the error type stays
    /// [`Infallible`](std::convert::Infallible)). A `call` made without a
    /// successful `poll_ready` queues without waiting (`503` if full).
    ///
    /// The `ttl` applies as in the default mode: a request not started
    /// within it is answered `504` (the time spent waiting in `poll_ready`
    /// is not part of it: the request is not there yet).
    ///
    /// # Which mode
    ///
    /// - The default (no backpressure): a request's lane is known only
    ///   from its head, and a full lane answers `503` with `Retry-After`
    ///   at once. What an HTTP edge under a flood wants: clients learn at
    ///   once, and no connection is held while the server is saturated.
    /// - Backpressure: the lane is known before the request (a service per
    ///   route and class), and the caller should wait for room rather than
    ///   be refused: internal services, a `Buffer` in front, a client that
    ///   retries badly. Put `LoadShed` on top to shed at the edge with
    ///   tower's own error instead, or a `TimeoutLayer` to bound the wait.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use http::{Request, Response};
    /// use http_body_util::{BodyExt, Full};
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use priority_executor_tower::PriorityLayer;
    /// use tower::{ServiceBuilder, ServiceExt};
    ///
    /// let exec = Executor::builder()
    ///     .lane(Priority(10), Capacity::Bounded(16))
    ///     .lane(Priority(1), Capacity::Bounded(64))
    ///     .build()?;
    /// // The premium route: its requests wait for room in lane 10, at most
    /// // 32 at a time; beyond that they are shed with tower's error.
    /// let premium = PriorityLayer::new(exec.clone()).backpressure(Priority(10));
    /// let service = ServiceBuilder::new()
    ///     .load_shed()
    ///     .concurrency_limit(32)
    ///     .layer(premium)
    ///     .service(|request: Request<Bytes>| Response::new(request.into_body()));
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    /// let body = runtime.block_on(async {
    ///     // `poll_ready` (inside `oneshot`) is ready once lane 10 has a
    ///     // slot, which the service keeps for the call.
    ///     let request = Request::new(Full::new(Bytes::from("visa")));
    ///     let response = service.oneshot(request).await?;
    ///     Ok::<_, tower::BoxError>(response.into_body().collect().await?.to_bytes())
    /// })?;
    /// assert_eq!(body, "visa");
    /// # Ok::<(), tower::BoxError>(())
    /// ```
    pub fn backpressure(mut self, priority: Priority) -> Self {
        self.backpressure = Some(priority);
        self
    }

    /// The executor requests go to now (`None`: the registry no longer
    /// has it).
    pub(crate) fn executor(&self) -> Option<Executor> {
        match &self.target {
            Target::One { executor, .. } => Some(executor.clone()),
            Target::Registry { executors, name } => executors.get(name).ok(),
        }
    }

    /// The counters of every service this layer made: requests received
    /// and their outcomes.
    ///
    /// # Examples
    ///
    /// See [`Counts`].
    pub fn counts(&self) -> Counts {
        self.counters.snapshot()
    }

    /// The priority of a request with this head.
    pub(crate) fn priority_of(&self, head: &http::request::Parts) -> Route {
        if let Some(priority) = self.backpressure {
            return Route::To(priority);
        }
        if let Some(classify) = &self.classify {
            // The application's code: a panic is the request's answer
            // (`500`), not an unwind through the server's connection.
            return match catch_unwind(AssertUnwindSafe(|| classify(head))) {
                Ok(priority) => Route::To(priority),
                Err(payload) => {
                    drop_quietly(payload);
                    Route::ClassifierPanicked
                }
            };
        }
        match &self.target {
            Target::One { lowest, .. } => Route::To(*lowest),
            Target::Registry { executors, name } => {
                by_rules(executors, name, &head.headers).map_or(Route::Gone, Route::To)
            }
        }
    }
}

/// The priority the rules of the registry's executor `name` give a
/// request with these headers (`None`: the registry has no such
/// executor now).
pub(crate) fn by_rules(
    executors: &Registry,
    name: &str,
    headers: &http::HeaderMap,
) -> Option<Priority> {
    executors.priority_for(name, &headers_to_message(headers))
}

/// Where a request goes, from its head.
pub(crate) enum Route {
    To(Priority),
    /// The registry no longer has the executor.
    Gone,
    /// The [`classify`](PriorityLayer::classify) closure panicked.
    ClassifierPanicked,
}

impl fmt::Debug for PriorityLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = match &self.target {
            Target::One { executor, .. } => executor.name().to_owned(),
            Target::Registry { name, .. } => format!("registry: {name}"),
        };
        f.debug_struct("PriorityLayer")
            .field("executor", &target)
            .field("classify", &self.classify.is_some())
            .field("ttl", &self.ttl)
            .field("retry_after", &self.retry_after)
            .field("body_limit", &self.body_limit)
            .field("backpressure", &self.backpressure)
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}
