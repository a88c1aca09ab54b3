export { demoBulkRules, demoRules } from "./demo-rules";
export {
  assertDemoSeedAllowed,
  DEMO_EMAIL,
  DEMO_PASSWORD,
  DEMO_RESEARCHER,
  DEMO_STUDY,
  seedDemo,
  type DemoFile,
} from "./demo-seed";
export {
  DemoStepFailed,
  mailpitMailbox,
  outboxMailbox,
  runDemoStory,
  type DemoStoryOptions,
  type Mailbox,
} from "./demo-story";
