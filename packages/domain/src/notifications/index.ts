// Researcher notifications: subscriptions, and NOTIFY_RESEARCHER messages delivered by e-mail.
export {
  ANY_MESSAGE_TYPE,
  MAX_MESSAGE_TYPE_LENGTH,
  MAX_SUBSCRIPTION_EMAIL_LENGTH,
  addSubscription,
  listSubscriptions,
  messageTypeProblem,
  removeSubscription,
  subscriptionEmail,
  type ResearcherSubscription,
  type SubscriptionInput,
} from "./subscriptions";
export {
  RESEARCHER_NOTIFICATION_TEMPLATE,
  renderResearcherNotification,
  type ResearcherNotificationPayload,
} from "./notification-mail";
export {
  MAX_NOTIFICATION_BATCHES_PER_CALL,
  NOTIFICATION_BATCH_SIZE,
  queueResearcherNotifications,
  type QueueNotificationsOptions,
  type QueuedNotifications,
} from "./queue-notifications";
export * from "./notification-subscriptions";
