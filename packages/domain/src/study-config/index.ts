// Study configuration: properties and status, code lists, study variables, rules versions, the audit log.
export {};
