import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAddress, isIpLiteral } from './address-policy.ts';

const refused: [string, string][] = [
  ['10.0.0.1', 'private'],
  ['172.16.5.4', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['127.0.0.2', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['169.254.1.1', 'linkLocal'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['::ffff:127.0.0.1', 'ipv4Mapped:loopback'],
  ['::ffff:10.1.2.3', 'ipv4Mapped:private'],
  ['::ffff:169.254.169.254', 'ipv4Mapped:metadata'],
  ['::ffff:7f00:1', 'ipv4Mapped:loopback'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456::1', 'uniqueLocal'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['64:ff9b::a00:1', 'rfc6052'],
  ['2002:a00:1::1', '6to4'],
  ['2001:0:4136:e378::1', 'teredo'],
  ['192.0.2.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['example.com', 'invalid'],
  ['', 'invalid'],
];

test('every non-public range is refused and named', () => {
  for (const [address, range] of refused) {
    assert.equal(checkAddress(address), { allowed: false, range }, address);
  }
});

test('public unicast addresses are allowed, also IPv4-mapped and in brackets', () => {
  for (const address of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '100.63.255.255', '100.128.0.1', '172.32.0.1', '2606:4700:4700::1111', '[2a00:1450::1]']) {
    assert.is(checkAddress(address).allowed, true, address);
  }
  assert.equal(checkAddress('::ffff:8.8.8.8'), { allowed: true, range: 'ipv4Mapped:unicast' });
});

test('IP literals are told apart from names', () => {
  assert.ok(isIpLiteral('127.0.0.1'));
  assert.ok(isIpLiteral('[::1]'));
  assert.ok(isIpLiteral('::ffff:127.0.0.1'));
  assert.not.ok(isIpLiteral('localhost'));
  assert.not.ok(isIpLiteral('example.org'));
});

test.run();
