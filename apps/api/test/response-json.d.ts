// Tests read JSON bodies whose shape each assertion checks; typing them `any` keeps assertions terse.
interface Response {
  json(): Promise<any>;
}
