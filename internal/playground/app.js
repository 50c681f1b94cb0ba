// Boots GraphiQL for the AlgoItny API (internal/playground): the endpoint over
// HTTP and websockets (graphql-transport-ws) on this page's host, the example
// tabs of the main flow, and the session token of the last sign-in sent
// from every tab.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('playground-config').textContent);
  var wsScheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  var tokenKey = 'algoitny:playground:token';

  var inner = GraphiQL.createFetcher({
    url: location.protocol + '//' + location.host + config.endpoint,
    subscriptionUrl: wsScheme + '//' + location.host + config.endpoint,
  });

  // withToken adds the remembered token unless the tab's headers carry an
  // Authorization of their own. Over websockets GraphiQL sends the headers as
  // the connection_init payload, which is where the API reads the token.
  function withToken(headers) {
    var out = Object.assign({}, headers || {});
    var own = Object.keys(out).some(function (k) { return k.toLowerCase() === 'authorization'; });
    var token = localStorage.getItem(tokenKey);
    if (!own && token) {
      out.Authorization = 'Bearer ' + token;
    }
    return out;
  }

  // remember keeps the token of a sign-in, and forgets it on logout.
  function remember(result) {
    var data = result && result.data;
    if (!data) {
      return;
    }
    var signedIn = data.devLogin || data.loginWithGoogle;
    if (signedIn && signedIn.token) {
      localStorage.setItem(tokenKey, signedIn.token);
    }
    if (data.logout === true) {
      localStorage.removeItem(tokenKey);
    }
  }

  // observe passes results through, remembering tokens, whatever shape the
  // fetcher returns: a promise, an async iterable (subscriptions, and
  // GraphiQL's HTTP fetcher) or a plain value.
  function observe(out) {
    if (out && typeof out.then === 'function') {
      return out.then(observe);
    }
    if (out && typeof out[Symbol.asyncIterator] === 'function') {
      return (async function* () {
        for await (var result of out) {
          remember(result);
          yield result;
        }
      })();
    }
    remember(out);
    return out;
  }

  function fetcher(params, opts) {
    var options = Object.assign({}, opts, { headers: withToken(opts && opts.headers) });
    return observe(inner(params, options));
  }

  var tabs = config.tabs.map(function (t) {
    return { query: t.query, variables: t.variables || undefined };
  });

  ReactDOM.render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultTabs: tabs,
      defaultEditorToolsVisibility: true,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      inputValueDeprecation: true,
    }),
    document.getElementById('graphiql')
  );
})();
