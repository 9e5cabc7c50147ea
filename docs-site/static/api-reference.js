// Starts the bundled Swagger UI on the merged OpenAPI document. Nothing is loaded from another
// host: the spec comes from this site, the validator badge (validator.swagger.io) is off, and
// "Try it out" is sent to the origin that serves these pages.
(function () {
  var root = document.getElementById('swagger-ui');
  fetch(root.getAttribute('data-spec'))
    .then(function (response) {
      return response.json();
    })
    .then(function (spec) {
      spec.servers = [{ url: window.location.origin, description: 'The server of these pages' }].concat(
        spec.servers || [],
      );
      window.ui = window.SwaggerUIBundle({
        spec: spec,
        domNode: root,
        deepLinking: true,
        validatorUrl: null,
        docExpansion: 'list',
        defaultModelsExpandDepth: 0,
        tryItOutEnabled: false,
        persistAuthorization: false,
        withCredentials: false,
        onComplete: function () {
          root.setAttribute('data-ready', 'true');
        },
      });
    })
    .catch(function (error) {
      root.textContent = 'The API reference could not be loaded: ' + error;
    });
})();
