//! A request's span recorded by the telemetry itself (feature `otel`), for the telemetry
//! [`Telemetry::from_env`](super::Telemetry::from_env) sets up, whose spans go to this crate's
//! OTLP processor (`otlp.rs`).
//!
//! The SDK's span keeps its attributes as a vector of `KeyValue`s, made at every request and
//! written to protobuf one by one when it ends. Most of a request span's attributes are known in
//! advance (its method, its transport, its revision): here they stay the request's own fields
//! ([`Attributes`]), and most are written as bytes prepared once. The span is otherwise what
//! the SDK makes (bench/middleware.md has the measures):
//!
//! * its trace is the parent's, its ids come from the SDK's random generator, and the sampler is
//!   the SDK's, from the same `OTEL_TRACES_SAMPLER` variables (asked with no attributes: none
//!   of the samplers those variables choose reads them);
//! * the span limits are the SDK's (`OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`, …);
//! * it sits in the request's `opentelemetry::Context` as any span does: handlers add attributes,
//!   events, links and a status to it through `Context::current()`, and their own spans are its
//!   children;
//! * it ends when the request ends, or when the last context holding it is dropped.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::{
    Event, Link, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{
    IdGenerator as _, RandomIdGenerator, SamplingDecision, ShouldSample, SpanLimits,
};

use super::otlp::{self, Record, SpanQueue};

/// A request span's attributes as its request knows them when it begins.
pub(super) trait Attributes: Send + Sync + 'static {
    /// How many there are.
    fn count(&self) -> usize;

    /// Writes the first `at_most` of them as a `Span` message's fields 9
    /// ([`otlp::attribute`]).
    fn write(&self, out: &mut Vec<u8>, at_most: usize);
}

/// Where request spans go, and what the SDK would have made them with.
pub(super) struct Direct {
    queue: SpanQueue,
    scope: InstrumentationScope,
    sampler: Box<dyn ShouldSample>,
    ids: RandomIdGenerator,
    limits: SpanLimits,
}

impl Direct {
    /// Spans of this scope queued to `queue`, sampled and limited as the SDK's configuration
    /// from the environment says (`opentelemetry_sdk::trace::Config::default`).
    pub fn from_env(queue: SpanQueue, scope: InstrumentationScope) -> Direct {
        Self::new(queue, scope, opentelemetry_sdk::trace::Config::default())
    }

    /// Spans sampled and limited as `config` says.
    pub fn new(
        queue: SpanQueue,
        scope: InstrumentationScope,
        config: opentelemetry_sdk::trace::Config,
    ) -> Direct {
        Direct {
            queue,
            scope,
            sampler: config.sampler,
            ids: RandomIdGenerator::default(),
            limits: config.span_limits,
        }
    }

    /// Starts a request's span (of kind `SERVER`, child of `parent`'s span if it has a valid
    /// one) and returns the context the request runs in: `parent` with the span in it.
    pub fn start(
        self: &Arc<Self>,
        parent: &Context,
        name: Cow<'static, str>,
        start: SystemTime,
        attributes: impl Attributes,
        mut links: Vec<Link>,
    ) -> Context {
        if parent.is_telemetry_suppressed() {
            return parent.with_remote_span_context(SpanContext::empty_context());
        }
        let span_id = self.ids.new_span_id();
        let parent_span = parent.span();
        let parent_context = Some(parent_span.span_context()).filter(|c| c.is_valid());
        let trace_id = match parent_context {
            Some(parent) => parent.trace_id(),
            None => self.ids.new_trace_id(),
        };
        let sampling =
            self.sampler.should_sample(Some(parent), trace_id, &name, &SpanKind::Server, &[], &links);
        let flags = parent_context.map_or(TraceFlags::default(), |c| c.trace_flags());
        let sampled = match sampling.decision {
            SamplingDecision::Drop => {
                let context =
                    SpanContext::new(trace_id, span_id, TraceFlags::default(), false, sampling.trace_state);
                return parent.with_remote_span_context(context);
            }
            SamplingDecision::RecordOnly => false,
            SamplingDecision::RecordAndSample => true,
        };
        let context =
            SpanContext::new(trace_id, span_id, flags.with_sampled(sampled), false, sampling.trace_state);
        // The limits, as the SDK applies them to a span it starts: the attributes known at the
        // start first, then the sampler's.
        let most = self.limits.max_attributes_per_span as usize;
        let known = attributes.count();
        let mut added = sampling.attributes;
        let room = most.saturating_sub(known);
        let dropped_attributes = known.saturating_sub(most) + added.len().saturating_sub(room);
        added.truncate(room);
        let dropped_links = links.len().saturating_sub(self.limits.max_links_per_span as usize);
        links.truncate(self.limits.max_links_per_span as usize);
        for link in &mut links {
            link.dropped_attributes_count = limit(&mut link.attributes, self.limits.max_attributes_per_link);
        }
        let span = RequestSpan {
            direct: self.clone(),
            context,
            parent: parent_context.map_or(SpanId::INVALID, |c| c.span_id()),
            parent_is_remote: parent_context.is_some_and(|c| c.is_remote()),
            name,
            start,
            known: attributes,
            added,
            dropped_attributes: dropped_attributes as u32,
            events: Vec::new(),
            dropped_events: 0,
            links,
            dropped_links: dropped_links as u32,
            status: Status::Unset,
            sampled,
            ended: false,
        };
        parent.with_span(span)
    }
}

/// Keeps the first `most` attributes, and says how many were dropped.
fn limit(attributes: &mut Vec<KeyValue>, most: u32) -> u32 {
    let dropped = attributes.len().saturating_sub(most as usize);
    attributes.truncate(most as usize);
    dropped as u32
}

/// A request's span (see the module's documentation).
struct RequestSpan<A: Attributes> {
    direct: Arc<Direct>,
    context: SpanContext,
    parent: SpanId,
    parent_is_remote: bool,
    name: Cow<'static, str>,
    start: SystemTime,
    /// The attributes known at its start.
    known: A,
    /// Those added since (and the sampler's).
    added: Vec<KeyValue>,
    dropped_attributes: u32,
    events: Vec<Event>,
    dropped_events: u32,
    links: Vec<Link>,
    dropped_links: u32,
    status: Status,
    /// Sampled, so exported (else only recorded).
    sampled: bool,
    ended: bool,
}

impl<A: Attributes> RequestSpan<A> {
    /// How many attributes it has: the known ones within the limit, and the added ones.
    fn attributes(&self) -> usize {
        self.known.count().min(self.direct.limits.max_attributes_per_span as usize) + self.added.len()
    }
}

impl<A: Attributes> opentelemetry::trace::Span for RequestSpan<A> {
    fn add_event_with_timestamp<T>(&mut self, name: T, timestamp: SystemTime, mut attributes: Vec<KeyValue>)
    where
        T: Into<Cow<'static, str>>,
    {
        if self.ended {
            return;
        }
        if self.events.len() < self.direct.limits.max_events_per_span as usize {
            let dropped = limit(&mut attributes, self.direct.limits.max_attributes_per_event);
            self.events.push(Event::new(name, timestamp, attributes, dropped));
        } else {
            self.dropped_events += 1;
        }
    }

    fn span_context(&self) -> &SpanContext {
        &self.context
    }

    fn is_recording(&self) -> bool {
        !self.ended
    }

    fn set_attribute(&mut self, attribute: KeyValue) {
        if self.ended {
            return;
        }
        if self.attributes() < self.direct.limits.max_attributes_per_span as usize {
            self.added.push(attribute);
        } else {
            self.dropped_attributes += 1;
        }
    }

    fn set_status(&mut self, status: Status) {
        // As the SDK: Ok > Error > Unset, and a status never goes down.
        if !self.ended && status > self.status {
            self.status = status;
        }
    }

    fn update_name<T>(&mut self, new_name: T)
    where
        T: Into<Cow<'static, str>>,
    {
        if !self.ended {
            self.name = new_name.into();
        }
    }

    fn add_link(&mut self, span_context: SpanContext, mut attributes: Vec<KeyValue>) {
        if self.ended {
            return;
        }
        if self.links.len() < self.direct.limits.max_links_per_span as usize {
            let dropped = limit(&mut attributes, self.direct.limits.max_attributes_per_link);
            self.links.push(Link::new(span_context, attributes, dropped));
        } else {
            self.dropped_links += 1;
        }
    }

    fn end_with_timestamp(&mut self, timestamp: SystemTime) {
        if std::mem::replace(&mut self.ended, true) || !self.sampled {
            return;
        }
        let record = Record {
            context: &self.context,
            parent: self.parent,
            parent_is_remote: self.parent_is_remote,
            name: &self.name,
            kind: &SpanKind::Server,
            start: self.start,
            end: timestamp,
            dropped_attributes: self.dropped_attributes,
            events: &self.events,
            dropped_events: self.dropped_events,
            links: &self.links,
            dropped_links: self.dropped_links,
            status: &self.status,
        };
        let at_most = self.direct.limits.max_attributes_per_span as usize;
        self.direct.queue.push(&self.direct.scope, |out| {
            otlp::write_record(out, &record, |out| {
                self.known.write(out, at_most);
                for attribute in &self.added {
                    otlp::attribute(out, attribute.key.as_str(), &attribute.value);
                }
            })
        });
    }
}

impl<A: Attributes> Drop for RequestSpan<A> {
    /// A span never ended ends when dropped, as the SDK's does.
    fn drop(&mut self) {
        if !self.ended {
            opentelemetry::trace::Span::end_with_timestamp(self, opentelemetry::time::now());
        }
    }
}
