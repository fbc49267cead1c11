//! A client of the API server for threads without a runtime: `gpu-trust serve`'s HTTP threads ask it
//! to review a token or an access ([`crate::access`]) and its audit loop to write reports
//! ([`crate::reports`]). One thread runs a runtime with one client; each call is a task on it, so
//! calls from many threads run at the same time, and each is bounded in time.

use crate::{connect, Error, Options};
use futures::future::BoxFuture;
use kube::Client;
use std::sync::mpsc;
use std::time::Duration;

type Job = Box<dyn FnOnce(Result<Client, Error>) -> BoxFuture<'static, ()> + Send>;

/// The handle the callers hold; cloning it is cheap.
#[derive(Clone)]
pub struct Service {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
}

impl Service {
    /// Starts the thread; the client is made on the first call (and again after a failure).
    pub fn start(options: Options) -> Service {
        let (jobs, mut rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
        std::thread::spawn(move || {
            let Ok(rt) = crate::runtime() else {
                // Every call then fails: its reply channel is dropped with the job.
                return;
            };
            rt.block_on(async move {
                let mut client: Option<Client> = None;
                while let Some(job) = rx.recv().await {
                    let c = match &client {
                        Some(c) => Ok(c.clone()),
                        None => match connect(&options).await {
                            Ok((c, _)) => {
                                client = Some(c.clone());
                                Ok(c)
                            }
                            Err(e) => Err(e),
                        },
                    };
                    tokio::spawn(job(c));
                }
            });
        });
        Service { jobs }
    }

    /// Runs `f` with the client and waits at most `timeout` for its answer.
    pub fn call<T, F>(
        &self,
        timeout: Duration,
        f: impl FnOnce(Client) -> F + Send + 'static,
    ) -> Result<T, Error>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T, Error>> + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |client| {
            Box::pin(async move {
                let result = match client {
                    Ok(c) => match tokio::time::timeout(timeout, f(c)).await {
                        Ok(r) => r,
                        Err(_) => Err(Error::Timeout(timeout.as_secs())),
                    },
                    Err(e) => Err(e),
                };
                let _ = tx.send(result);
            })
        });
        self.jobs.send(job).map_err(|_| Error::Stopped)?;
        // The task ends by its own timeout; a little more here for the handover.
        match rx.recv_timeout(timeout + Duration::from_secs(1)) {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout(timeout.as_secs())),
        }
    }
}
