export { createStudy } from "../study-setup/study-setup";
