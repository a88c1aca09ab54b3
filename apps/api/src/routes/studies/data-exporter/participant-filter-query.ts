import { caseJsonQuery } from "./case-query";

/** `filter` of the participant export and its count, which select alike. */
export const filterQuery = caseJsonQuery(
  "filter",
  'CASE\'s Mongo-style filter on participantID, studyStatus, enteredAt, modifiedAt, flags.X, linkingCodes.X, e.g. {"studyStatus":"active"}',
);
