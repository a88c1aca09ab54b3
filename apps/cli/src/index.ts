/** What other workspaces and tests use of the CLI; the process entry is main.ts. */
export {
  defineCommand,
  type BoundCommand,
  type CliCommand,
  type CliContext,
  type CommandDefinition,
  type OutputContext,
} from "./command-definition";
export { loadConfig, type CliConfig } from "./config";
export { describeFailure, UsageError, type Failure } from "./failures";
export { createCapturedOutput, createOutput, fieldLines, oneLine, type Output, type OutputStreams } from "./output";
export { COMMANDS, parseCommandLine, usage, type CommandLine } from "./program";
export { demoSeed, type DemoSeedInput } from "./commands/demo-seed";
export { demoWalkthrough, type DemoWalkthroughInput } from "./commands/demo-walkthrough";
export { migrate } from "./commands/migrate";
export { participantsAdd, type ParticipantsAddInput } from "./commands/participants-add";
export { passwordResetToken, type PasswordResetTokenInput } from "./commands/password-reset-token";
export { permissionGrant, type PermissionGrantInput } from "./commands/permission-grant";
export { studyCreate, type StudyCreateInput } from "./commands/study-create";
export { studySetRules, type StudySetRulesInput } from "./commands/study-set-rules";
export { tokenManagement, type ManagementTokenCommandInput } from "./commands/token-management";
export { tokenParticipant, type ParticipantTokenCommandInput } from "./commands/token-participant";
export { tokenRevoke, type TokenRevokeInput } from "./commands/token-revoke";
export { userCreate, type UserCreateInput } from "./commands/user-create";
