//! The shape vocabulary the generated model tables are written in.
//!
//! A shape refers to others by index into its service's `SHAPES` array. Every name here is
//! already resolved to what travels on the wire (Query parameter segment, XML element), so
//! the codecs never reason about `locationName` inheritance.

use super::{model_sns, model_sqs, Action, Service};

#[derive(Debug)]
pub enum Shape {
    Structure(&'static [Member]),
    List {
        member: u16,
        /// The element/segment name of one entry: `member` for a wrapped list, the
        /// query-era name (e.g. `QueueUrl`) for a flattened one, or empty when a flattened
        /// list simply repeats its own name.
        member_name: &'static str,
        flattened: bool,
    },
    Map {
        key: u16,
        value: u16,
        key_name: &'static str,
        value_name: &'static str,
        flattened: bool,
    },
    String,
    Integer,
    Long,
    Boolean,
    #[allow(dead_code)] // emitted by the generator should a model gain one
    Double,
    Blob,
    #[allow(dead_code)]
    Timestamp,
}

#[derive(Debug)]
pub struct Member {
    /// The JSON protocol's member name.
    pub name: &'static str,
    /// What it travels under in a Query form and in XML.
    pub wire: &'static str,
    pub shape: u16,
}

#[derive(Debug)]
pub struct Op {
    pub name: &'static str,
    pub input: Option<u16>,
    pub output: Option<u16>,
    /// `<XResult>` element; empty when the action has no output.
    pub result_wrapper: &'static str,
}

/// One service's model: its shapes and the operations we answer.
#[derive(Clone, Copy)]
pub struct Model {
    pub shapes: &'static [Shape],
    pub ops: &'static [Op],
}

impl Model {
    pub fn of(service: Service) -> Model {
        match service {
            Service::Sqs => Model {
                shapes: &model_sqs::SHAPES,
                ops: &model_sqs::OPS,
            },
            Service::Sns => Model {
                shapes: &model_sns::SHAPES,
                ops: &model_sns::OPS,
            },
        }
    }

    pub fn op(&self, action: Action) -> Option<&'static Op> {
        self.ops.iter().find(|op| op.name == action.name())
    }

    /// Whether the action's input has a member of this (JSON) name.
    pub fn input_has(&self, action: Action, member: &str) -> bool {
        let input = self.op(action).and_then(|op| op.input);
        matches!(input.map(|id| self.shape(id)), Some(Shape::Structure(ms)) if ms.iter().any(|m| m.name == member))
    }

    pub fn shape(&self, id: u16) -> &'static Shape {
        // Indices come from the generated table itself, so they are always in range; a
        // scalar fallback keeps a corrupt table from panicking a request.
        self.shapes.get(id as usize).unwrap_or(&Shape::String)
    }
}
