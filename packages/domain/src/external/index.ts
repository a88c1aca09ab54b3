/** External services the rules call, as a study configures them. */
export * from "./external-service-config";
export * from "./http-external-services";
