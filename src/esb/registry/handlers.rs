//! Registering sequences, fault handlers and before-enqueue hooks. Each
//! takes `&self`: it changes a copy of the table and swaps it in, so it may
//! be called on a shared registry, from a sequence too.

use super::{HookFn, Registry, Table};
use crate::UnknownName;
use crate::esb::sequence::{FaultFn, Sequence, SequenceFailure, SequenceFn};
use crate::{Message, Priority};
use std::error::Error;
use std::sync::Arc;

impl Registry {
    /// Registers the sequence `name`, replacing one of the same name (its
    /// counters and fault handler carry on).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message};
    ///
    /// let executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("log", |m: Message| {
    ///     println!("{} bytes", m.body().len());
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// assert!(executors.sequence_metrics("log").is_some());
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn register_sequence<F, E>(&self, name: impl Into<String>, f: F)
    where
        F: Fn(Message) -> Result<(), E> + Send + Sync + 'static,
        E: Error + Send + Sync + 'static,
    {
        let name = name.into();
        let run: SequenceFn = Arc::new(move |m| f(m).map_err(|e| Box::new(e) as _));
        self.update(|table| {
            let counters = Arc::clone(table.counters.entry(name.clone()).or_default());
            let fault = table.sequences.get(&name).and_then(|s| s.fault.clone());
            let sequence = Sequence {
                name: Arc::from(name.as_str()),
                run,
                fault,
                counters,
            };
            table.sequences.insert(name, Arc::new(sequence));
        });
    }

    /// Sets the fault handler of the sequence `sequence` (Synapse's fault
    /// sequence): when a run fails, it receives the message as it was
    /// enqueued and the [`SequenceFailure`]. It takes precedence over the
    /// executor's. A handler that panics is caught: the run's handle still
    /// reports the sequence's own failure.
    ///
    /// # Errors
    ///
    /// [`UnknownName`] if no such sequence is registered.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message};
    /// use std::sync::mpsc;
    ///
    /// let executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("submit", |_m: Message| Err(std::fmt::Error));
    /// let (tx, rx) = mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// executors.set_sequence_fault_handler("submit", move |m, failure| {
    ///     let _ = tx.lock().unwrap().send((m.body().to_vec(), failure.sequence.to_string()));
    /// })?;
    /// let message = Message::new().with_body("form");
    /// executors.enqueue_sequence("e", "submit", message)?.join()?.unwrap_err();
    /// assert_eq!(rx.recv()?, (b"form".to_vec(), "submit".to_owned()));
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_sequence_fault_handler<F>(&self, sequence: &str, f: F) -> Result<(), UnknownName>
    where
        F: Fn(Message, &SequenceFailure) + Send + Sync + 'static,
    {
        let fault: FaultFn = Arc::new(f);
        self.update(|table| match table.sequences.get_mut(sequence) {
            Some(found) => {
                Arc::make_mut(found).fault = Some(fault);
                Ok(())
            }
            None => {
                let known = table.sequences.keys().cloned().collect();
                Err(UnknownName::new("sequence", sequence, known))
            }
        })
    }

    /// Sets the fault handler of every sequence run on `executor` that has
    /// no fault handler of its own.
    ///
    /// # Errors
    ///
    /// [`UnknownName`] if there is no such executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("fail", |_m: Message| Err(std::fmt::Error));
    /// let faults = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&faults);
    /// executors.set_executor_fault_handler("e", move |_m, _failure| {
    ///     counter.fetch_add(1, Ordering::SeqCst);
    /// })?;
    /// executors.enqueue_sequence("e", "fail", Message::new())?.join()?.unwrap_err();
    /// assert_eq!(faults.load(Ordering::SeqCst), 1);
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_executor_fault_handler<F>(&self, executor: &str, f: F) -> Result<(), UnknownName>
    where
        F: Fn(Message, &SequenceFailure) + Send + Sync + 'static,
    {
        let fault: FaultFn = Arc::new(f);
        self.update(|table| {
            table.entry_mut(executor)?.fault = Some(fault);
            Ok(())
        })
    }

    /// Sets the before-enqueue hook of `executor` (Synapse's
    /// `BeforeExecuteHandler`). It runs on the enqueuing thread after the
    /// rules chose a priority, and may read and change the message and the
    /// priority. A priority with no lane is then refused with the message.
    /// The hook runs inside the enqueue call, so a panicking hook panics the
    /// caller.
    ///
    /// # Errors
    ///
    /// [`UnknownName`] if there is no such executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, Priority};
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.e]\nlanes = [{ priority = 10 }, { priority = 1 }]\n",
    /// )?;
    /// executors.register_sequence("check", |m: Message| {
    ///     assert_eq!(m.property("stamped"), Some("yes"));
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// executors.set_before_enqueue("e", |m: &mut Message, p: &mut Priority| {
    ///     m.set_property("stamped", "yes");
    ///     if m.property("vip").is_some() {
    ///         *p = Priority(10);
    ///     }
    /// })?;
    /// let vip = Message::new().with_property("vip", "1");
    /// assert!(executors.enqueue_sequence("e", "check", vip)?.join()?.is_ok());
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_before_enqueue<F>(&self, executor: &str, f: F) -> Result<(), UnknownName>
    where
        F: Fn(&mut Message, &mut Priority) + Send + Sync + 'static,
    {
        let hook: HookFn = Arc::new(f);
        self.update(|table| {
            table.entry_mut(executor)?.hook = Some(hook);
            Ok(())
        })
    }
}

impl Table {
    /// The entry of `executor`, to change (a copy, if the entry is shared
    /// with the table being replaced).
    fn entry_mut(&mut self, executor: &str) -> Result<&mut super::Entry, UnknownName> {
        let known: Vec<String> = self.entries.keys().cloned().collect();
        self.entries
            .get_mut(executor)
            .map(Arc::make_mut)
            .ok_or_else(|| UnknownName::new("executor", executor, known))
    }
}
