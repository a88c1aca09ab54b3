// Survey definitions: upload, versions, the current version, unpublish, response version checks.
export {};
