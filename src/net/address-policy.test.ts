import { describe, expect, it } from 'vitest';
import { allowEverything, isGlobalUnicast, portRule, webhookUrlProblem } from './address-policy.js';

const webPorts = portRule([]);

describe('isGlobalUnicast (the address dialled is what counts)', () => {
  const blocked: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback, end of range'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12 end'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT end'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast (SSDP)'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.1', 'IETF protocol assignments'],
    ['192.0.2.1', 'documentation TEST-NET-1'],
    ['198.51.100.1', 'documentation TEST-NET-2'],
    ['203.0.113.1', 'documentation TEST-NET-3'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with zone'],
    ['fc00::1', 'ULA'],
    ['fd00:ec2::254', 'ULA (AWS metadata over IPv6)'],
    ['ff02::1', 'IPv6 multicast'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['3fff::1', 'IPv6 documentation (2024)'],
    ['100::1', 'discard prefix'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:0:a00:1', 'IPv4-translated private (RFC 6145)'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
    ['64:ff9b:1::808:808', 'local-use NAT64 prefix'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:a9fe:a9fe::1', '6to4 of metadata'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo whose client is 127.0.0.1'],
    ['::7f00:1', 'IPv4-compatible (deprecated) loopback'],
    ['::a00:1', 'IPv4-compatible private'],
    ['fec0::1', 'site-local (deprecated)'],
    ['not an ip', 'garbage'],
    ['', 'empty'],
    ['127.1', 'shorthand is not an address the client would dial'],
  ];
  it.each(blocked)('blocks %s (%s)', (ip) => {
    expect(isGlobalUnicast(ip)).toBe(false);
  });

  const allowed: [string, string][] = [
    ['8.8.8.8', 'public IPv4'],
    ['1.1.1.1', 'public IPv4'],
    ['93.184.215.14', 'public IPv4'],
    ['172.32.0.1', 'just outside 172.16/12'],
    ['100.128.0.1', 'just outside CGNAT'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['2a00:1450:4001:81c::200e', 'public IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['64:ff9b::808:808', 'NAT64 of a public address'],
    ['2002:808:808::1', '6to4 of a public address'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo whose client is 8.8.8.8'],
  ];
  it.each(allowed)('allows %s (%s)', (ip) => {
    expect(isGlobalUnicast(ip)).toBe(true);
  });
});

describe('webhookUrlProblem (creation-time check)', () => {
  it.each([
    ['not a url', 'must be an absolute URL'],
    ['ftp://example.com/hook', 'must use http or https'],
    ['file:///etc/passwd', 'must use http or https'],
    ['javascript:alert(1)', 'must use http or https'],
    ['http://user:pw@example.com/', 'must not contain credentials'],
    ['https://user@example.com/', 'must not contain credentials'],
    ['http://127.0.0.1/', 'non-public'],
    ['http://2130706433/', 'non-public'],
    ['http://0x7f.1/', 'non-public'],
    ['http://127.1/', 'non-public'],
    ['http://0177.0.0.1/', 'non-public'],
    ['http://[::1]/', 'non-public'],
    ['http://[::ffff:127.0.0.1]/', 'non-public'],
    ['http://169.254.169.254/latest/meta-data', 'non-public'],
    ['http://[fd00:ec2::254]/', 'non-public'],
    ['http://10.1.2.3:8080/', 'non-public'],
    ['http://localhost:3000/', 'non-public'],
    ['http://api.localhost/', 'non-public'],
    ['https://hooks.example.com:8443/', 'must use port 80 or 443'],
    ['http://example.com:25/', 'must use port 80 or 443'],
    ['http://example.com:6379/', 'must use port 80 or 443'],
  ])('refuses %s', (url, message) => {
    expect(webhookUrlProblem(url, isGlobalUnicast, webPorts)).toContain(message);
  });

  it.each([
    'https://example.com/hooks',
    'http://8.8.8.8/x',
    'https://[2606:4700:4700::1111]/',
    'https://hooks.example.com:443/a?b=c',
    'http://hooks.example.com:80/',
  ])('accepts %s', (url) => {
    expect(webhookUrlProblem(url, isGlobalUnicast, webPorts)).toBeNull();
  });

  it('lets private addresses through only when the policy allows everything', () => {
    expect(webhookUrlProblem('http://127.0.0.1:9000/', allowEverything, portRule([9000]))).toBeNull();
    expect(webhookUrlProblem('ftp://127.0.0.1/', allowEverything, webPorts)).toBe('must use http or https');
  });

  it('accepts other ports only when WEBHOOK_ALLOWED_PORTS lists them', () => {
    expect(webhookUrlProblem('https://hooks.example.com:8443/', isGlobalUnicast, webPorts)).toContain('port');
    expect(webhookUrlProblem('https://hooks.example.com:8443/', isGlobalUnicast, portRule([8443]))).toBeNull();
    expect(webhookUrlProblem('https://hooks.example.com:8444/', isGlobalUnicast, portRule([8443]))).toContain('port');
  });
});
