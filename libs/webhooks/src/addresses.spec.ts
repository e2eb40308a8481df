import { addressProblem, isIpLiteral, parseIPv4, parseIPv6, targetProblem } from './addresses';

describe('address parsing', () => {
  it.each([
    ['1.2.3.4', 0x01020304],
    ['255.255.255.255', 0xffffffff],
    ['0.0.0.0', 0],
    ['01.2.3.4', null],
    ['1.2.3', null],
    ['1.2.3.256', null],
    ['1.2.3.4.5', null],
    ['0x7f.0.0.1', null],
    ['example.com', null],
  ])('IPv4 %p', (text, expected) => {
    expect(parseIPv4(text)).toBe(expected);
  });

  it.each([
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['2001:db8::ff00:42:8329', [0x2001, 0xdb8, 0, 0, 0, 0xff00, 0x42, 0x8329]],
    ['::ffff:127.0.0.1', [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ['::ffff:7f00:1', [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ['fe80::1%eth0', [0xfe80, 0, 0, 0, 0, 0, 0, 1]],
    ['[::1]', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['1:2:3:4:5:6:7:8', [1, 2, 3, 4, 5, 6, 7, 8]],
    ['1:2:3:4:5:6:1.2.3.4', [1, 2, 3, 4, 5, 6, 0x102, 0x304]],
    ['1:2:3:4:5:6:7:8:9', null],
    ['1::2::3', null],
    ['12345::', null],
    ['1:2:3:4:5:6:7', null],
    ['::ffff:1.2.3', null],
    ['g::1', null],
    ['1.2.3.4', null],
  ])('IPv6 %p', (text, expected) => {
    expect(parseIPv6(text)).toEqual(expected);
  });
});

describe('addresses a delivery may not reach', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['192.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'ipv4_mapped'],
    ['::ffff:8.8.8.8', 'ipv4_mapped'],
    ['::ffff:a9fe:a9fe', 'ipv4_mapped'],
    ['::127.0.0.1', 'ipv4_mapped'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link_local'],
    ['febf::1', 'link_local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1::', 'private'],
    ['2001:db8::1', 'reserved'],
    ['10.255.255.255', 'private'],
    ['100.127.255.254', 'shared'],
    ['127.255.0.9', 'loopback'],
    ['192.0.0.170', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:7f00:1', 'ipv4_mapped'],
    ['64:ff9b:1::808:808', 'reserved'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['fdff:ffff::1', 'unique_local'],
    ['fe80::1%eth0', 'link_local'],
    ['localhost', 'not_an_ip'],
    ['', 'not_an_ip'],
    ['256.0.0.1', 'not_an_ip'],
    ['1.2.3', 'not_an_ip'],
    ['::g', 'not_an_ip'],
  ])('%p is refused as %p', (address, problem) => {
    expect(addressProblem(address)).toBe(problem);
  });

  it.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['172.32.0.1'],
    ['100.128.0.1'],
    ['169.253.0.1'],
    ['2606:4700:4700::1111'],
    ['2a00:1450:4001::200e'],
    ['64:ff9b::808:808'],
    ['2002:808:808::'],
    ['100.63.255.255'],
    ['172.15.255.255'],
    ['192.169.0.1'],
    ['198.17.255.255'],
    ['198.20.0.0'],
    ['223.255.255.255'],
    ['11.0.0.1'],
    ['126.255.255.255'],
    ['128.0.0.1'],
    ['fbff::1'],
    ['fe00::1'],
    ['2001:db9::1'],
    ['64:ff9c::1'],
  ])('%p is allowed', (address) => {
    expect(addressProblem(address)).toBeNull();
  });

  it('tells IP literals from names', () => {
    expect(isIpLiteral('127.0.0.1')).toBe(true);
    expect(isIpLiteral('::1')).toBe(true);
    expect(isIpLiteral('localhost')).toBe(false);
  });
});

describe('target URLs', () => {
  it.each([
    ['https://hooks.example.com/x', false, null],
    ['http://hooks.example.com/x', false, 'scheme'],
    ['http://hooks.example.com/x', true, null],
    ['ftp://hooks.example.com/x', true, 'scheme'],
    ['file:///etc/passwd', true, 'scheme'],
    ['https://user:pass@hooks.example.com/', false, 'credentials'],
    ['not a url', false, 'invalid_url'],
  ])('%p (plain http allowed: %p) is %p', (url, allow, problem) => {
    expect(targetProblem(url, allow)).toBe(problem);
  });
});
