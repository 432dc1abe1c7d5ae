// One of the processes of 'the generated key file, shared by server processes'
// (test/releases/encryption.test.ts): in round r it waits, spinning, until T0 + r * 25 ms, so that
// every process generates DIR/r/vault.key at the same moment, then prints the key id each round got
// (or `error:` and why) as one JSON array.  Arguments: DIR T0 ROUNDS.
import { Keyring } from '../../src/modules/vault/keyring.js';

const [dir, t0, rounds] = process.argv.slice(2);
const ids: string[] = [];
for (let round = 0; round < Number(rounds); round++) {
  const at = Number(t0) + round * 25;
  while (Date.now() < at) {
    // spin: a timer would start the rounds of the processes milliseconds apart
  }
  try {
    ids.push((await new Keyring(null, [], `${dir}/${round}/vault.key`).currentKey()).keyId);
  } catch (e) {
    ids.push(`error:${(e as Error).message}`);
  }
}
console.log(JSON.stringify(ids));
