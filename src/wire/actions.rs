//! The closed action table: the 40 names this facade answers, and nothing else.
//! `Action::ALL` is the dispatch table; a name outside it is `InvalidAction`.

use super::Service;

macro_rules! actions {
    ($($variant:ident => $service:ident),+ $(,)?) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action { $($variant),+ }

        impl Action {
            pub const ALL: [Action; 40] = [$(Action::$variant),+];

            /// The action's name exactly as AWS spells it.
            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => stringify!($variant)),+ }
            }

            /// The service the action is filed under. `AddPermission` and
            /// `RemovePermission` are SQS's here, though SNS publishes them too.
            pub fn service(self) -> Service {
                match self { $(Action::$variant => Service::$service),+ }
            }
        }
    };
}

actions! {
    CreateQueue => Sqs,
    DeleteQueue => Sqs,
    GetQueueUrl => Sqs,
    ListQueues => Sqs,
    GetQueueAttributes => Sqs,
    SetQueueAttributes => Sqs,
    SendMessage => Sqs,
    SendMessageBatch => Sqs,
    ReceiveMessage => Sqs,
    DeleteMessage => Sqs,
    DeleteMessageBatch => Sqs,
    ChangeMessageVisibility => Sqs,
    ChangeMessageVisibilityBatch => Sqs,
    PurgeQueue => Sqs,
    ListQueueTags => Sqs,
    TagQueue => Sqs,
    UntagQueue => Sqs,
    ListDeadLetterSourceQueues => Sqs,
    StartMessageMoveTask => Sqs,
    CancelMessageMoveTask => Sqs,
    ListMessageMoveTasks => Sqs,
    AddPermission => Sqs,
    RemovePermission => Sqs,
    CreateTopic => Sns,
    DeleteTopic => Sns,
    ListTopics => Sns,
    GetTopicAttributes => Sns,
    SetTopicAttributes => Sns,
    Subscribe => Sns,
    Unsubscribe => Sns,
    ConfirmSubscription => Sns,
    ListSubscriptions => Sns,
    ListSubscriptionsByTopic => Sns,
    GetSubscriptionAttributes => Sns,
    SetSubscriptionAttributes => Sns,
    TagResource => Sns,
    UntagResource => Sns,
    ListTagsForResource => Sns,
    Publish => Sns,
    PublishBatch => Sns,
}

impl Action {
    /// Whether `service` publishes this action: its own service always, and SNS also
    /// publishes the two permission actions.
    pub fn is_published_by(self, service: Service) -> bool {
        self.service() == service
            || (service == Service::Sns
                && matches!(self, Action::AddPermission | Action::RemovePermission))
    }

    /// Case-sensitive lookup within one service's closed set.
    pub fn from_name(service: Service, name: &str) -> Option<Action> {
        Action::ALL
            .iter()
            .copied()
            .find(|a| a.name() == name && a.is_published_by(service))
    }
}
