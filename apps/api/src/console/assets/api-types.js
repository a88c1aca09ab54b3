// @ts-check
// The shapes of the API answers the console reads (see /openapi.json for the full contract).

/**
 * CASE's LocalisedObject: a language code and text parts.
 * @typedef {{ code: string, parts: { dtype: string, str: string }[] }} LocalisedText
 */

/**
 * @typedef {object} Study
 * @property {string} key
 * @property {string} status
 * @property {{ name: LocalisedText[], description: LocalisedText[], tags: { label: LocalisedText[] }[] }} props
 * @property {number | null} currentRulesVersion
 */

/**
 * @typedef {"queued" | "in_progress" | "completed" | "failed" | "canceled" | "skipped"} TaskStatus
 */

/**
 * @typedef {object} Task
 * @property {string} id
 * @property {"run-actions" | "timer" | "export-responses" | "export-participants" | "export-reports"} kind
 * @property {string} createdAt
 * @property {string} createdBy
 * @property {string} updatedAt
 * @property {TaskStatus} status
 * @property {number} targetCount
 * @property {number} processedCount
 * @property {string} resultFile
 * @property {string} error
 */

/**
 * @typedef {Task & {
 *   startedAt: string | null,
 *   finishedAt: string | null,
 *   dryRun: boolean,
 *   tick: { dueAt: string, rulesVersion: number } | null
 * }} TaskListItem
 */

/**
 * @typedef {object} ResultDocument
 * @property {number} participantCount
 * @property {number[]} participantStateChangedPerRule
 * @property {number} errorCount
 * @property {{ participantId: string, error: string }[]} errors
 * @property {number} durationMs
 * @property {boolean} dryRun
 * @property {{ dueAt: string, rulesVersion: number }} [tick]
 */

/**
 * @typedef {object} RuleFailure
 * @property {string} id
 * @property {string} participantId
 * @property {string} eventType
 * @property {string} eventKey
 * @property {number | null} rulesVersion
 * @property {string | null} taskId
 * @property {number} ruleIndex
 * @property {string} path
 * @property {string} message
 * @property {string} outcome
 * @property {string} occurredAt
 */

/**
 * @typedef {object} StudyTimer
 * @property {boolean} paused
 * @property {boolean} handlesTimer
 * @property {boolean} studyActive
 * @property {number} effectiveIntervalSeconds
 * @property {{ dueAt: string, rulesVersion: number, task: Task } | null} lastTick
 * @property {string | null} nextTickAt
 * @property {boolean} dueNow
 */

/**
 * @typedef {object} ParticipantCounts
 * @property {Record<string, number>} byStatus
 * @property {number} total
 */

/**
 * @typedef {{ path: string, message: string }} RuleIssue
 */

/**
 * A participant as the data explorer returns it (CASE's shape; times in Unix seconds).
 * @typedef {object} ParticipantState
 * @property {string} participantId
 * @property {string} studyStatus
 * @property {string} [currentStudySession]
 * @property {number} enteredAt
 * @property {number} modifiedAt
 * @property {Record<string, string> | null} flags
 * @property {Record<string, string> | null} [linkingCodes]
 * @property {{ surveyKey: string, category?: string, validFrom?: number, validUntil?: number }[] | null} assignedSurveys
 * @property {Record<string, number> | null} lastSubmissions
 * @property {{ id: string, type: string, scheduledFor: number }[] | null} [messages]
 */

/**
 * CASE's page of a list: page numbers from 1.
 * @typedef {{ totalCount: number, currentPage: number, totalPages: number, pageSize: number }} Pagination
 */

/**
 * A report as the data explorer returns it.
 * @typedef {object} ExplorerReport
 * @property {string} id
 * @property {string} key
 * @property {string} participantID
 * @property {number} timestamp
 * @property {{ key: string, value: string, dtype?: string }[] | null} data
 */

/**
 * A task as the data exporter's routes return it (CASE's Task).
 * @typedef {object} ExportTask
 * @property {string} id
 * @property {string} createdAt
 * @property {string} createdBy
 * @property {string} updatedAt
 * @property {TaskStatus} status
 * @property {number} targetCount
 * @property {number} processedCount
 * @property {string} resultFile
 * @property {string} fileType
 * @property {string} [error]
 */

/**
 * A study's daily export settings (studyflow's daily-export-config route).
 * @typedef {object} DailyExportConfig
 * @property {string[]} surveyKeys
 * @property {boolean} enabled
 * @property {{
 *   format: "wide" | "long" | "json",
 *   questionOptionSep: string,
 *   shortKeys: boolean,
 *   extraContextColumns: string[],
 *   includeMeta: { position: boolean, initTimes: boolean, displayedTimes: boolean, responsedTimes: boolean },
 *   gzip: boolean,
 *   guardFormulas: boolean
 * }} options
 * @property {string} updatedBy
 * @property {string} updatedAt
 */

export {};
